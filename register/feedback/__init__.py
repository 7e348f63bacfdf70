"""Validated feedback: reports, four-eyes validation, resolution (``items``) and the scope-level s_H (``scope``)."""
