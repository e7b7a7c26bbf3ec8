"""The answers app's pages. Helpers C1 (leaderboard, imports) and C2 (assessor pages, banks) add lines here."""

from django.urls import path  # noqa: F401

app_name = "answers"

urlpatterns: list = []
