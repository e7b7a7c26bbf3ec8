from django.contrib import admin

from judging.models import Judgment, PropagatedJudgment
from workbench.admin import CollectionScoped, ReadOnlyAdmin


@admin.register(Judgment)
class JudgmentAdmin(CollectionScoped, ReadOnlyAdmin):
    """Judgments are an append-only log: the admin shows them but never edits or deletes them."""

    list_display = ["topic", "docno", "grade", "cannot_judge", "assessor", "source", "created_at", "time_spent_ms"]
    list_filter = ["collection", "source", "assessor", "cannot_judge"]
    search_fields = ["docno", "topic__qid", "assessor"]
    list_select_related = ["topic"]
    show_full_result_count = False


@admin.register(PropagatedJudgment)
class PropagatedJudgmentAdmin(CollectionScoped, ReadOnlyAdmin):
    """Read only: propagated grades are made and revoked with their class (Judging > Near-duplicates)."""

    list_display = ["topic", "docno", "grade", "source", "duplicate_class", "similarity", "created_at"]
    list_filter = ["collection"]
    search_fields = ["docno", "topic__qid"]
    list_select_related = ["topic", "source", "duplicate_class"]
