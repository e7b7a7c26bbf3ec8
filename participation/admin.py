from django.contrib import admin

from participation.models import Submission, Team, Track
from workbench.admin import CollectionScoped


@admin.register(Track)
class TrackAdmin(CollectionScoped, admin.ModelAdmin):
    list_display = ["collection", "open", "opens_at", "closes_at", "max_runs_per_team", "pooled_runs_per_team",
                    "topics_published", "results_released", "leaderboard"]


@admin.register(Team)
class TeamAdmin(CollectionScoped, admin.ModelAdmin):
    collection_path = "track__collection"

    list_display = ["name", "display_name", "track"]
    list_filter = ["track"]
    filter_horizontal = ["members"]


@admin.register(Submission)
class SubmissionAdmin(CollectionScoped, admin.ModelAdmin):
    """Submissions are records of what a team sent and what the checker said: read-only here."""

    collection_path = "team__track__collection"

    list_display = ["id", "team", "tag", "file_name", "status", "submitted_at", "submitted_by"]
    list_filter = ["status", "team__track"]
    search_fields = ["tag", "file_name", "sha256"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
