"""Judgments: an append-only log. Nothing is updated or deleted; the current grade of an
assessor for a (topic, document) is their latest record, and each record points at the one it
revised."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from workbench.models import Collection, Topic


class Judgment(models.Model):
    class Source(models.TextChoices):
        WEB = "web", "Judged in the browser"
        IMPORT = "import", "Imported qrels"
        ADJUDICATION = "adjudication", "Adjudicated"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="judgments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="judgments")
    docno = models.CharField(max_length=200)
    grade = models.IntegerField(null=True, blank=True, help_text="Empty when the assessor could not judge.")
    cannot_judge = models.BooleanField(default=False)
    assessor = models.CharField(max_length=150, help_text="User name, or the source of imported qrels.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                             related_name="judgments")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEB)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="revisions")
    comment = models.TextField(blank=True)
    rationale = models.TextField(blank=True, help_text="Highlighted passage supporting the grade.")
    passages = models.JSONField(default=list, blank=True, db_default=[],
                                help_text="Supporting passages as [start, end) character offsets into the document's text.")
    client_token = models.CharField(max_length=64, null=True, blank=True, unique=True,
                                    help_text="Idempotency key of the post that created the record.")

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(cannot_judge=True) & Q(grade__isnull=True))
                | (Q(cannot_judge=False) & Q(grade__isnull=False)),
                name="judgment_grade_or_cannot_judge"),
            models.UniqueConstraint(fields=["previous"], name="judgment_revised_once"),
        ]
        indexes = [
            models.Index(fields=["collection", "topic", "docno"], name="judgment_doc"),
            models.Index(fields=["collection", "assessor"], name="judgment_assessor"),
        ]

    def __str__(self) -> str:
        value = "cannot judge" if self.cannot_judge else self.grade
        return f"{self.topic.qid} {self.docno} = {value} ({self.assessor})"


class Assignment(models.Model):
    """A topic of a pool given to one assessor; its items are the documents they judge."""

    pool = models.ForeignKey("pooling.Pool", on_delete=models.CASCADE, related_name="assignments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="assignments")
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    effort = models.PositiveIntegerField(default=0, help_text="Estimated reading effort (words) of its items.")

    class Meta:
        ordering = ["pool", "topic", "assessor"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "topic", "assessor"], name="assignment_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.topic.qid} → {self.assessor}"


class AssignmentItem(models.Model):
    """One document an assessor must judge. ``latest`` points at their current judgment of it."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    docno = models.CharField(max_length=200)
    judging_order = models.PositiveIntegerField()
    latest = models.ForeignKey(Judgment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["assignment", "judging_order"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "docno"], name="assignmentitem_unique_doc"),
        ]
        indexes = [models.Index(fields=["assignment", "latest", "judging_order"], name="assignmentitem_queue")]

    def __str__(self) -> str:
        return f"{self.assignment} {self.docno}"


class PropagatedJudgment(models.Model):
    """A grade copied from a judged document of an accepted near-duplicate class to a member nobody judged for the
    topic (``judging.duplicates``). Its own record, not a Judgment: never an assessor's work, never in agreement,
    never in the default qrels; only in the "with duplicates" qrels. Revoking the class deletes these rows and
    nothing else."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="propagated_judgments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="propagated_judgments")
    docno = models.CharField(max_length=200)
    grade = models.IntegerField()
    source = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="propagations",
                               help_text="The judgment of the class's judged document that gave the grade.")
    duplicate_class = models.ForeignKey("workbench.DuplicateClass", on_delete=models.CASCADE,
                                        related_name="propagated_judgments")
    similarity = models.FloatField(help_text="Estimated similarity of this document to the judged one.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["duplicate_class", "topic", "docno"]
        constraints = [models.UniqueConstraint(fields=["topic", "docno"], name="propagatedjudgment_one_per_doc")]
        indexes = [models.Index(fields=["collection", "topic", "docno"], name="propagated_doc")]

    def __str__(self) -> str:
        return f"{self.topic.qid} {self.docno} = {self.grade} (propagated from {self.source.docno})"
