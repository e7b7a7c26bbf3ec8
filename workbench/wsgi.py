"""WSGI entry point (gunicorn workbench.wsgi; ``runserver`` loads it too)."""
import os

from django.apps import apps
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
application = get_wsgi_application()

# Libraries the pages need but commands mostly do not (statistics, plots) are imported on first use, so
# that a command starts fast; a server warms them up now (each app's config says what it needs), so that
# no visitor's first page waits ~1.5 s.
for config in apps.get_app_configs():
    warm_up = getattr(config, "warm_up", None)
    if callable(warm_up):
        warm_up()
