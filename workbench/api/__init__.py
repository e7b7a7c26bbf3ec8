"""The HTTP API under /api/v1/ (django-ninja)."""
