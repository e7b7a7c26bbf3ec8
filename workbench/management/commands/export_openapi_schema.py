"""``manage.py export_openapi_schema --api workbench.api.v1.api``: the HTTP API's OpenAPI schema as JSON (the docs'
endpoint table is made from it, docs/hooks/api.py). django-ninja's own command, offered here because ninja is not
an installed app (workbench/settings.py says why)."""

from ninja.management.commands.export_openapi_schema import Command

__all__ = ["Command"]
