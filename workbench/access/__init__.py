"""Who may do what: per-collection organizers, people and roles, API tokens, the audit log, login throttling, the judges' declared endpoints."""
