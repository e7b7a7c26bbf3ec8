"""The organizer's console: /console/..."""

from django.urls import path
from django.views.generic import RedirectView

from workbench.console import people_views
from workbench.console import views as console_views
from workbench.corpora import views as corpus_views

app_name = "workbench"

urlpatterns = [
    # the collections (each with its console) are listed on the home page
    path("", RedirectView.as_view(pattern_name="home", permanent=False)),
    path("new/", console_views.collection_new, name="collection_new"),
    path("jobs/", console_views.jobs_list, name="jobs"),
    path("people/", people_views.people, name="people"),
    path("people/<int:user_id>/", people_views.person, name="person"),
    path("<slug:slug>/", console_views.console, name="console"),
    path("<slug:slug>/edit/", console_views.collection_edit, name="collection_edit"),
    path("<slug:slug>/upload/", console_views.upload, name="upload"),
    path("<slug:slug>/runs/", console_views.runs, name="runs"),
    path("<slug:slug>/document/", console_views.document, name="document"),
    path("<slug:slug>/corpora/", corpus_views.corpora, name="corpora"),
    path("<slug:slug>/people/", people_views.collection_people, name="collection_people"),
    path("<slug:slug>/audit/", people_views.audit, name="audit"),
]
