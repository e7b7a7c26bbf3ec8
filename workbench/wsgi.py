"""WSGI entry point (gunicorn workbench.wsgi; ``runserver`` loads it too)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
application = get_wsgi_application()

# Libraries the pages need but commands mostly do not (statistics, plots) are imported on first use, so
# that a command starts fast; a server imports them now, so that no visitor's first page waits ~1.5 s.
import scipy.stats  # noqa: E402, F401

import evaluation.plots  # noqa: E402

evaluation.plots.warm_up()
