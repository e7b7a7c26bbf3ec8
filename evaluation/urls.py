from django.urls import path

from evaluation import budget_views, qrels_compare_views, reusability_views, significance_views, views

app_name = "evaluation"

urlpatterns = [
    path("<slug:slug>/", views.overview, name="overview"),
    path("<slug:slug>/downloads/", views.downloads, name="downloads"),
    path("<slug:slug>/budget/", budget_views.budget, name="budget"),
    path("<slug:slug>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("<slug:slug>/runs/<path:tag>/", views.run_page, name="run"),
    path("<slug:slug>/topics/<path:qid>/", views.topic_page, name="topic"),
    path("<slug:slug>/significance/", significance_views.significance, name="significance"),
    path("<slug:slug>/significance/numbers/", significance_views.significance_numbers, name="significance_numbers"),
    path("<slug:slug>/curves/", views.curves, name="curves"),
    path("<slug:slug>/reusability/", reusability_views.reusability, name="reusability"),
    path("<slug:slug>/compare-qrels/", qrels_compare_views.compare_qrels_page, name="compare_qrels"),
    path("<slug:slug>/pool/", views.pool_page, name="pool"),
    path("<slug:slug>/downloads/qrels.txt", views.download_qrels, name="download_qrels"),
    path("<slug:slug>/downloads/pool.txt", views.download_pool, name="download_pool"),
    path("<slug:slug>/downloads/release.zip", views.download_release, name="download_release"),
    path("<slug:slug>/downloads/evaluation/", views.evaluate_job, name="evaluate_job"),
    path("<slug:slug>/downloads/judgments.jsonl", views.download_judgments, name="download_judgments"),
    path("<slug:slug>/downloads/release/<int:job_id>/", views.download_release_file, name="download_release_file"),
]
