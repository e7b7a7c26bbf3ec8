from django.urls import path

from participation import organizer_views

app_name = "participation_console"

urlpatterns = [
    path("", organizer_views.manage, name="manage"),
    path("teams/", organizer_views.team_add, name="team_add"),
    path("release/", organizer_views.release, name="release"),
]
