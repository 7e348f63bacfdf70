-- 038: a password reset ends the account's sessions, as disabling it does (issue 34, class 9).
-- A session is the console's own (ui.framework.auth) and re-reads its account on every run: a disabled account
-- ends it, but a reset password left it running. Each account now counts the times its sessions were ended
-- (register.access.identity: a password reset, a disable); a session records the count at login and ends when it
-- differs. Never edit once landed: add a new numbered file instead.

ALTER TABLE users ADD COLUMN session_generation INTEGER DEFAULT 0;
