"""The HTTP API with every app's endpoints: what the URLconf serves at ``/api/v1/`` and the docs export.

Built when the URLconf is first loaded (the server's first request, or a command that reverses a URL), not at
``django.setup()``: each endpoint makes its pydantic models when declared, which a command that never serves
the API should not pay for. Importing this module imports the organizers' console endpoints
(:mod:`workbench.api.console`) and every app's ``api`` module (:func:`workbench.api.core.autodiscover`)."""

from __future__ import annotations

from workbench.api import console  # noqa: F401  (adds the console's endpoints to workbench.api.core's router)
from workbench.api.core import api, autodiscover

__all__ = ["api"]

autodiscover()
