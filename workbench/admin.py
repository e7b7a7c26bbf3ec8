from django.contrib import admin

from workbench.access.audit import AuditEntry
from workbench.collections.selectors import organized_collections
from workbench.models import Collection, Document, DuplicateClass, Run, Topic


class CollectionScoped:
    """A ModelAdmin mixin for rows that belong to a collection (through ``collection_path``; "" for the
    collection itself): a staff user who is not a superuser sees, and may link rows to, only the collections
    they manage (``workbench.collections.selectors.may_organize``); another collection's row is "not found"."""

    collection_path = "collection"

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        if request.user.is_superuser:
            return rows
        field = f"{self.collection_path}__in" if self.collection_path else "pk__in"
        return rows.filter(**{field: organized_collections(request.user).values("pk")})

    def get_list_filter(self, request):
        """For them, filters by a related row list only the rows shown (not every collection's names)."""
        filters = super().get_list_filter(request)
        if request.user.is_superuser:
            return filters
        return [(f, admin.RelatedOnlyFieldListFilter) if isinstance(f, str) and "__" not in f
                and self.model._meta.get_field(f).is_relation else f for f in filters]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Collection and not request.user.is_superuser:
            kwargs["queryset"] = organized_collections(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the admin shows but never adds, changes or deletes (records kept append-only, or made by a page)."""

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


@admin.register(Collection)
class CollectionAdmin(CollectionScoped, admin.ModelAdmin):
    collection_path = ""
    list_display = ["slug", "name", "relevant_from", "max_depth", "researchers_may_download", "created_at"]
    search_fields = ["slug", "name"]
    list_filter = ["researchers_may_download"]


@admin.register(Topic)
class TopicAdmin(CollectionScoped, admin.ModelAdmin):
    list_display = ["qid", "title", "collection"]
    list_filter = ["collection"]
    search_fields = ["qid", "title", "description", "narrative"]
    list_select_related = ["collection"]


@admin.register(Document)
class DocumentAdmin(CollectionScoped, admin.ModelAdmin):
    list_display = ["docno", "title", "length", "collection"]
    list_filter = ["collection"]
    search_fields = ["docno", "title"]
    list_select_related = ["collection"]
    show_full_result_count = False


@admin.register(Run)
class RunAdmin(CollectionScoped, admin.ModelAdmin):
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
class DuplicateClassAdmin(CollectionScoped, ReadOnlyAdmin):
    """Read only: the organizer decides on a class on its page (Judging > Near-duplicates), which also revokes or
    makes its propagated judgments."""

    list_display = ["representative", "collection", "similarity", "status", "judge_members", "created_at"]
    list_filter = ["collection", "status"]
    search_fields = ["representative", "members__docno"]


@admin.register(AuditEntry)
class AuditEntryAdmin(CollectionScoped, ReadOnlyAdmin):
    """Read only: the audit log is written by the services that change a collection."""

    list_display = ["created_at", "collection", "actor", "action", "detail"]
    list_filter = ["action"]
    list_select_related = ["collection", "actor"]
