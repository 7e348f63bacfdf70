"""What waits for a person: the drafts, sign-offs, approvals and requests a signed-in account may settle now
(``items.waiting_for``), each read through the query of the package that owns it, with where it is done.

It sits above every package it reads (feedback, console, governance, labels, ingest, scoring, access) and below
the command line and the API, which may show it.
"""
