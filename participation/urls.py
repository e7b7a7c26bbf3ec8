from django.urls import path

from participation import views

app_name = "participation"

urlpatterns = [
    path("", views.portal, name="portal"),
    path("<slug:slug>/", views.team_page, name="team"),
    path("<slug:slug>/topics/<str:format>", views.topics_download, name="topics"),
    path("<slug:slug>/submissions/<int:submission_id>/", views.receipt, name="receipt"),
    path("<slug:slug>/submissions/<int:submission_id>/file", views.submission_file, name="submission_file"),
    path("<slug:slug>/results/", views.results, name="results"),
]
