from django.contrib import admin

from judging.models import Judgment


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """Judgments are an append-only log: the admin shows them but never edits or deletes them."""

    list_display = ["topic", "docno", "grade", "cannot_judge", "assessor", "source", "created_at", "time_spent_ms"]
    list_filter = ["collection", "source", "assessor", "cannot_judge"]
    search_fields = ["docno", "topic__qid", "assessor"]
    list_select_related = ["topic"]
    show_full_result_count = False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
