"""Root URLs."""

from django.contrib import admin
from django.urls import include, path

from workbench import views

urlpatterns = [
    path("", views.home, name="home"),
    path("jobs/<int:job_id>/", views.job, name="job"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("judge/", include("judging.urls")),
    path("collections/", include("evaluation.urls")),
    path("admin/", admin.site.urls),
]
