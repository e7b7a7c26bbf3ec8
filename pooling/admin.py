from django.contrib import admin

from pooling.models import Pool, PoolEntry


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ["__str__", "strategy", "order", "seed", "created_at", "updated_at"]
    list_filter = ["collection", "strategy"]


@admin.register(PoolEntry)
class PoolEntryAdmin(admin.ModelAdmin):
    list_display = ["pool", "topic", "docno", "judging_order", "pool_rank", "min_depth", "inclusion_probability",
                    "round"]
    list_filter = ["pool", "round"]
    search_fields = ["docno", "topic__qid"]
    list_select_related = ["pool__collection", "topic"]
    show_full_result_count = False
