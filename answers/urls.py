"""The answers app's pages. Helpers C1 (leaderboard, imports) and C2 (assessor pages, banks) add lines here."""

from django.urls import path

from answers import banks_views, judging_machine_views, judging_views, leaderboard_views

app_name = "answers"

urlpatterns: list = [
    path("<slug:slug>/leaderboard/", leaderboard_views.answer_leaderboard, name="leaderboard"),
    path("<slug:slug>/judge/", judging_views.tasks, name="judge_tasks"),
    path("<slug:slug>/judge/<str:qid>/nuggets/", judging_views.nuggets, name="judge_nuggets"),
    path("<slug:slug>/judge/<str:qid>/support/", judging_views.support, name="judge_support"),
    path("<slug:slug>/nugget-assessors/", judging_machine_views.nugget_assessors, name="nugget_assessors"),
    path("<slug:slug>/banks/<str:qid>/", banks_views.bank, name="bank"),
    path("<slug:slug>/banks/<str:qid>/draft/", banks_views.bank_draft, name="bank_draft"),
]
