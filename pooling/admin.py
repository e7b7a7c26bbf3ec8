from django.contrib import admin

from pooling.models import Pool, PoolEntry, PoolProvenance
from workbench.admin import CollectionScoped


@admin.register(Pool)
class PoolAdmin(CollectionScoped, admin.ModelAdmin):
    """Pools are built from runs (the console's Pools page or build_pool): shown here, not made or edited."""

    list_display = ["__str__", "strategy", "order", "seed", "created_at", "updated_at"]
    list_filter = ["collection", "strategy"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PoolEntry)
class PoolEntryAdmin(CollectionScoped, admin.ModelAdmin):
    collection_path = "pool__collection"
    list_display = ["pool", "topic", "docno", "judging_order", "pool_rank", "min_depth", "inclusion_probability",
                    "round"]
    list_filter = ["pool", "round"]
    search_fields = ["docno", "topic__qid"]
    list_select_related = ["pool__collection", "topic"]
    show_full_result_count = False

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PoolProvenance)
class PoolProvenanceAdmin(CollectionScoped, admin.ModelAdmin):
    """Which builds stored provenance, and how much; the tables themselves are read by pool_stats and
    the evaluation pages."""

    collection_path = "pool__collection"

    list_display = ["pool", "round", "rows"]
    list_filter = ["pool"]
    fields = ["pool", "round", "rows"]
    readonly_fields = ["pool", "round", "rows"]
    list_select_related = ["pool__collection"]

    def has_add_permission(self, request) -> bool:
        return False
