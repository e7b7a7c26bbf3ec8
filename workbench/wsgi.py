"""WSGI entry point (gunicorn workbench.wsgi; ``runserver`` loads it too)."""
import os

from django.apps import apps
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
# A web worker's Arrow buffers come from the C library's allocator, which gives a request's memory back when
# it ends; Arrow's default (mimalloc) keeps it, and each results page then raised the worker's resident memory
# by what the page had used (a 234,000-line pool page: 95 MB with mimalloc, 52 MB so). Set before pandas or
# pyarrow is imported; ARROW_DEFAULT_MEMORY_POOL in the environment still decides.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
application = get_wsgi_application()
# the URLconf (the pages' views, the HTTP API's endpoints: workbench.api.v1) when the server starts, not in its
# first request; django.setup() alone (every command) does not load it
get_resolver().url_patterns  # noqa: B018

# Libraries some pages need but commands mostly do not (statistics, plots) are imported on first use, so
# that a command starts fast. With SERVER_WARM_UP=1 a server imports them now (each app's config says what it
# needs), so that no visitor's first significance or plot page waits ~1.5 s; it costs each web worker about
# 70 MB whether those pages are opened or not, so it is off by default.
for config in apps.get_app_configs() if settings.SERVER_WARM_UP else ():
    warm_up = getattr(config, "warm_up", None)
    if callable(warm_up):
        warm_up()
