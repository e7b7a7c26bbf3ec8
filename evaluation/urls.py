from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("<slug:slug>/", views.overview, name="overview"),
    path("<slug:slug>/downloads/", views.downloads, name="downloads"),
    path("<slug:slug>/downloads/qrels.txt", views.download_qrels, name="download_qrels"),
    path("<slug:slug>/downloads/pool.txt", views.download_pool, name="download_pool"),
    path("<slug:slug>/downloads/release.zip", views.download_release, name="download_release"),
]
