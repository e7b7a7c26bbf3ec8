from django.contrib import admin

from workbench.models import Collection, Document, Run, Topic


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
