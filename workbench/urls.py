"""Root URLs."""

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from workbench import views
from workbench.api.v1 import api
from workbench.console import account_views

#: a database that refused outside a view (a middleware's write) answers the "busy, try again" page, not a 500
handler500 = "workbench.jobs.busy.server_error"

urlpatterns = [
    path("", views.home, name="home"),
    path("jobs/<int:job_id>/", views.job, name="job"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("account/", account_views.account, name="account"),
    path("api/v1/", api.urls),  # every app's endpoints (workbench.api.v1: each app's api.py, discovered here)
    path("console/<slug:slug>/pools/", include("pooling.urls")),
    path("console/<slug:slug>/participation/", include("participation.console_urls")),
    path("participate/", include("participation.urls")),
    path("console/", include("workbench.console.urls")),
    path("judge/", include("judging.urls")),
    path("collections/", include("evaluation.urls")),
    path("answers/", include("answers.urls")),
    path("admin/", admin.site.urls),
    # browsers and tools ask for /favicon.ico whatever the page's <link rel="icon"> says
    path("favicon.ico", RedirectView.as_view(url=static("workbench/favicon.svg"), permanent=True)),
]
