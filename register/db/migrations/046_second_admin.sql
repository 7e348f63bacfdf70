-- 046: a one-admin install names its second admin from the console (issue 35, item 5).
-- Granting the admin role needs two admins (006: one requests, another approves), so an install with one admin
-- could only get a second at the command line. While one admin account exists and none was ever granted, that
-- admin may name a second admin once (register.access.second_admin); the grant is recorded as an approved
-- role_grants row flagged here, and audited as 'user.admin_named_while_sole_admin'. Once it exists (or any grant
-- was approved), the flag's row closes the exception for good. Never edit once landed: add a new numbered file.

ALTER TABLE role_grants ADD COLUMN named_while_sole_admin BOOLEAN DEFAULT false;
