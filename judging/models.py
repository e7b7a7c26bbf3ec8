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
        MACHINE = "machine", "Judged by a machine assessor"

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


class MachineJudge(models.Model):
    """A machine assessor: one judge configuration of a collection (``judging.machine`` registry), acting as a
    user of its own whose judgments are ordinary records of source ``machine``. The API key is never stored:
    it comes from the environment when the job runs."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="machine_judges")
    name = models.SlugField(max_length=64, help_text="Name of this configuration, e.g. 'embedding'.")
    kind = models.CharField(max_length=32, help_text="The judge in the registry: embedding, openai, ...")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="machine_judge")
    config = models.JSONField(default=dict, blank=True,
                              help_text="Model, endpoint (base URL), samples, concurrency; never a key.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "name"]
        constraints = [models.UniqueConstraint(fields=["collection", "name"], name="machinejudge_unique_name")]

    def __str__(self) -> str:
        return f"{self.collection.slug}: {self.name} ({self.kind})"

    @property
    def assessor_name(self) -> str:
        return self.user.username


class MachineVerdict(models.Model):
    """What a machine judge said of one (topic, document): the provenance of its judgment, or the record of
    a failure (then no judgment: a reply that could not be parsed never becomes a guessed grade)."""

    judge = models.ForeignKey(MachineJudge, on_delete=models.CASCADE, related_name="verdicts")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=200)
    judgment = models.OneToOneField(Judgment, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="machine_verdict")
    job = models.ForeignKey("workbench.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    ok = models.BooleanField(default=True)
    error = models.TextField(blank=True, help_text="Why no grade was recorded, in one line.")
    model = models.CharField(max_length=200, blank=True)
    model_version = models.CharField(max_length=200, blank=True)
    endpoint_host = models.CharField(max_length=200, blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    raw_reply = models.TextField(blank=True)
    parsed_grade = models.IntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True, help_text="Raw score, e.g. a cosine similarity.")
    probability = models.FloatField(null=True, blank=True, help_text="Calibrated probability of relevance.")
    latency_ms = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # no pair judged twice by the same judge
            models.UniqueConstraint(fields=["judge", "topic", "docno"], condition=Q(ok=True),
                                    name="machineverdict_judged_once"),
            models.CheckConstraint(condition=Q(ok=False) | Q(judgment__isnull=False),
                                   name="machineverdict_ok_has_judgment"),
        ]
        indexes = [models.Index(fields=["judge", "topic", "docno"], name="machineverdict_pair")]

    def __str__(self) -> str:
        return f"{self.judge.name} {self.topic_id} {self.docno}: {self.parsed_grade if self.ok else self.error}"
