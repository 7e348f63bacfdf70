"""Who may do what: local accounts and identity, roles and permissions, source access policies."""
