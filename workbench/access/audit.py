"""The audit log of organizer actions: who changed a collection's settings, its people and roles, its qrels
policy, or released its results, and when. Services write one entry each (``audit_record``); the collection's
organizers read them on its audit page, newest first."""

from __future__ import annotations

from django.db import models


class AuditEntry(models.Model):
    collection = models.ForeignKey("workbench.Collection", on_delete=models.CASCADE, related_name="audit_entries")
    actor = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                              help_text="Who did it (none: a command run on the server).")
    action = models.CharField(max_length=64, help_text="What kind of change, e.g. 'settings changed'.")
    detail = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        app_label = "workbench"
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.collection_id}: {self.action}"


def audit_record(*, collection, actor=None, action: str, detail: str = "") -> AuditEntry:
    """Write one entry of ``collection``'s audit log (``actor`` None or anonymous: a command on the server)."""
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    return AuditEntry.objects.create(collection=collection, actor=actor, action=action[:64], detail=detail)
