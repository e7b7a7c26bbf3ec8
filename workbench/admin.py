from django.contrib import admin

from workbench.models import Collection, Document, DuplicateClass, Run, Topic


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the admin shows but never adds, changes or deletes (records kept append-only, or made by a page)."""

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "relevant_from", "max_depth", "researchers_may_download", "created_at"]
    search_fields = ["slug", "name"]
    list_filter = ["researchers_may_download"]


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["qid", "title", "collection"]
    list_filter = ["collection"]
    search_fields = ["qid", "title", "description", "narrative"]
    list_select_related = ["collection"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["docno", "title", "length", "collection"]
    list_filter = ["collection"]
    search_fields = ["docno", "title"]
    list_select_related = ["collection"]
    show_full_result_count = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["tag", "team", "collection", "contributes", "pool_priority", "num_topics", "num_entries",
                    "imported_at"]
    list_filter = ["collection", "contributes", "team"]
    list_editable = ["contributes", "pool_priority"]
    search_fields = ["tag", "team", "description"]
    readonly_fields = ["source_file", "imported_at", "num_topics", "num_entries", "sha256"]
    list_select_related = ["collection"]
    fields = ["collection", "tag", "team", "description", "contributes", "pool_priority", "source_file",
              "imported_at", "num_topics", "num_entries", "sha256"]

    def has_add_permission(self, request) -> bool:
        """A run comes with its ranked lines: upload it (console, import_runs or the participant portal)."""
        return False

    def get_readonly_fields(self, request, obj=None):
        # the tag names the run in pools' provenance and in judged results: fixed once imported
        return [*self.readonly_fields, "collection", "tag"] if obj is not None else self.readonly_fields


@admin.register(DuplicateClass)
class DuplicateClassAdmin(ReadOnlyAdmin):
    """Read only: the organizer decides on a class on its page (Judging > Near-duplicates), which also revokes or
    makes its propagated judgments."""

    list_display = ["representative", "collection", "similarity", "status", "judge_members", "created_at"]
    list_filter = ["collection", "status"]
    search_fields = ["representative", "members__docno"]
