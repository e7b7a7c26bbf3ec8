"""Answer runs and what is judged of them: nugget banks, nugget assignments, citation support judgments.

- :class:`AnswerRun` is a participant's run of generated answers (``workbench.formats.answers``), beside the
  ranked :class:`~workbench.models.Run` of the same tag when the team sent both (``ranked_run``).
- :class:`Answer` is its answer to one topic; :class:`AnswerSentence` one sentence with the segment ids it cites.
- :class:`NuggetBank` is one *version* of a topic's bank; its :class:`Nugget` rows never change once another
  version exists (an edit makes a new version with copies, each naming the nugget it came from).
- :class:`NuggetAssignment` (answer x nugget -> support / partial_support / not_support) and
  :class:`SupportJudgment` (sentence x cited segment -> full_support / partial_support / no_support) are
  append-only like ``judging.Judgment``: a revision is a new record pointing at the one it revises; a machine
  assessor's records name its ``judging.MachineJudge`` and carry their provenance.
- :class:`AnswerPool` (kind ``nugget``: answers to assign nuggets to; kind ``support``: citation pairs) with
  its :class:`AnswerPoolItem` rows, and :class:`AnswerTask`, a topic of a pool given to one assessor.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.signals import post_save
from django.dispatch import receiver

from workbench.collections.signals import collection_changed
from workbench.models import Collection, Run, Topic


class Source(models.TextChoices):
    WEB = "web", "Judged in the browser"
    IMPORT = "import", "Imported"
    MACHINE = "machine", "Judged by a machine assessor"


class AnswerRun(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="answer_runs")
    tag = models.CharField(max_length=200, help_text="The run id of the file (metadata.run_id).")
    team = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    run_type = models.CharField(max_length=32, blank=True, default="", help_text="automatic or manual, as declared.")
    ir_metadata = models.JSONField(default=dict, blank=True, help_text="The run's ir_metadata, as submitted.")
    ranked_run = models.OneToOneField(Run, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="answer_run",
                                      help_text="The ranked run of the same submission (a run of kind both).")
    contributes = models.BooleanField(default=True, help_text="Its cited segments and answers are pooled.")
    source_file = models.CharField(max_length=500, blank=True)
    sha256 = models.CharField(max_length=64, blank=True, help_text="Checksum of the submitted file.")
    num_topics = models.PositiveIntegerField(default=0)
    num_sentences = models.PositiveIntegerField(default=0)
    num_citations = models.PositiveIntegerField(default=0)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "tag"], name="answerrun_unique_tag"),
            models.CheckConstraint(condition=~Q(tag=""), name="answerrun_tag_not_empty"),
        ]

    def __str__(self) -> str:
        return self.tag

    @property
    def kind(self) -> str:
        """``answer``, or ``both`` when a ranked run of the same submission is linked."""
        return "both" if self.ranked_run_id else "answer"


@receiver(post_save, sender=Run, dispatch_uid="answers-link-ranked-run")
def link_ranked_run(sender, instance: Run, raw: bool = False, **kwargs) -> None:
    """A ranked run stored after the answer run of the same tag is linked to it (a run of kind *both*), as an
    answer run imported after its ranked run is (``answers.imports``); a replaced ranked run, too."""
    if raw or AnswerRun.objects.filter(ranked_run=instance).exists():
        return
    AnswerRun.objects.filter(collection_id=instance.collection_id, tag=instance.tag,
                             ranked_run__isnull=True).update(ranked_run=instance)


@receiver(collection_changed, dispatch_uid="answers-link-ranked-runs")
def link_ranked_runs(sender, collection_id: int | None = None, **kwargs) -> None:
    """Runs written in bulk (a split import's runs moved into their collection, without ``post_save``): each
    unlinked answer run of the collection linked to the ranked run of its tag."""
    if sender is not Run or collection_id is None:
        return
    unlinked = AnswerRun.objects.filter(collection_id=collection_id, ranked_run__isnull=True)
    ranked = Run.objects.filter(collection_id=collection_id, tag__in=unlinked.values("tag"), answer_run__isnull=True)
    for tag, pk in ranked.values_list("tag", "pk"):
        unlinked.filter(tag=tag).update(ranked_run_id=pk)


class Answer(models.Model):
    run = models.ForeignKey(AnswerRun, on_delete=models.CASCADE, related_name="answers")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="answers")
    line = models.PositiveIntegerField(default=0, help_text="Its line in the submitted file.")
    references = models.JSONField(default=list, blank=True, help_text="The answer's references (segment ids).")
    cited = models.JSONField(default=list, blank=True,
                             help_text="Every segment its sentences cite, each once, in order of first citation.")
    metadata = models.JSONField(default=dict, blank=True)
    num_sentences = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["run", "topic"]
        constraints = [models.UniqueConstraint(fields=["run", "topic"], name="answer_one_per_topic")]

    def __str__(self) -> str:
        return f"{self.run.tag} {self.topic.qid}"


class AnswerSentence(models.Model):
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sentences")
    position = models.PositiveIntegerField(help_text="0 for the answer's first sentence.")
    text = models.TextField()
    citations = models.JSONField(default=list, blank=True, help_text="Segment ids cited, in the order given.")

    class Meta:
        ordering = ["answer", "position"]
        constraints = [models.UniqueConstraint(fields=["answer", "position"], name="answersentence_unique_position")]

    def __str__(self) -> str:
        return f"{self.answer} #{self.position}"


class NuggetBank(models.Model):
    """One version of a topic's nugget bank (1, 2, ...); the newest is the current one."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="nugget_banks")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="nugget_banks")
    version = models.PositiveIntegerField()
    query = models.TextField(blank=True, help_text="The topic's question as the bank states it (nuggetizer's query).")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEB)
    note = models.CharField(max_length=500, blank=True, help_text="What changed from the previous version.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "topic", "version"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "version"], name="nuggetbank_unique_version"),
            models.CheckConstraint(condition=Q(version__gte=1), name="nuggetbank_version_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.topic.qid} v{self.version}"


class Nugget(models.Model):
    class Importance(models.TextChoices):
        VITAL = "vital", "Vital"
        OKAY = "okay", "Okay"

    bank = models.ForeignKey(NuggetBank, on_delete=models.CASCADE, related_name="nuggets")
    order = models.PositiveIntegerField(help_text="Its place in the bank, 0 first.")
    text = models.TextField()
    importance = models.CharField(max_length=8, choices=Importance.choices, default=Importance.OKAY)
    origin = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="copies",
                               help_text="The nugget of an earlier version it was copied, edited, merged or split from.")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEB)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", help_text="The person, or a machine assessor's user.")
    machine_judge = models.ForeignKey("judging.MachineJudge", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+", help_text="The machine that drafted it.")
    provenance = models.JSONField(default=dict, blank=True, help_text="Model, prompt hash, segments it came from...")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bank", "order"]
        constraints = [
            models.UniqueConstraint(fields=["bank", "order"], name="nugget_unique_order"),
            models.CheckConstraint(condition=Q(importance__in=["vital", "okay"]), name="nugget_importance_known"),
        ]

    def __str__(self) -> str:
        return f"{self.bank} #{self.order} ({self.importance}): {self.text[:60]}"


class _Record(models.Model):
    """What a nugget assignment and a support judgment share: who made it, how, and what it revises."""

    # no index of its own: each model's (collection, assessor) index leads with it. Every index is written once
    # per row of an import (92,000 of them for 100 runs' answers): only those a query needs are kept
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+", db_index=False)
    assessor = models.CharField(max_length=150, help_text="User name, or the source of an imported file.")
    # user, machine judge, client token and previous are NULL in every imported row: their indexes hold only the
    # rows that have one (each model's Meta), not an entry per imported row
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                             related_name="+", db_index=False)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.WEB)
    machine_judge = models.ForeignKey("judging.MachineJudge", null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="+", db_index=False)
    provenance = models.JSONField(default=dict, blank=True,
                                  help_text="A machine's model, endpoint host, prompt hash, raw reply, latency.")
    created_at = models.DateTimeField(auto_now_add=True)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    comment = models.TextField(blank=True)
    client_token = models.CharField(max_length=64, null=True, blank=True,
                                    help_text="Idempotency key of the post that created the record (unique).")

    class Meta:
        abstract = True


class NuggetAssignment(_Record):
    """Whether an answer supports a nugget, judged against the bank version the nugget belongs to (``bank``)."""

    class Value(models.TextChoices):
        SUPPORT = "support", "Support"
        PARTIAL = "partial_support", "Partial support"
        NOT = "not_support", "No support"

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="nugget_assignments",
                               db_index=False)  # the (answer, bank) index leads with it
    nugget = models.ForeignKey(Nugget, on_delete=models.CASCADE, related_name="assignments")
    bank = models.ForeignKey(NuggetBank, on_delete=models.CASCADE, related_name="assignments",
                             help_text="The bank version it was made against (the nugget's).")
    assignment = models.CharField(max_length=16, choices=Value.choices)
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="revisions",
                                 db_index=False)  # its unique constraint is an index

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(assignment__in=["support", "partial_support", "not_support"]),
                                   name="nuggetassignment_value_known"),
            models.UniqueConstraint(fields=["previous"], condition=Q(previous__isnull=False),
                                    name="nuggetassignment_revised_once"),
            models.UniqueConstraint(fields=["client_token"], condition=Q(client_token__isnull=False),
                                    name="nuggetassignment_token_once"),
        ]
        indexes = [models.Index(fields=["answer", "bank"], name="nuggetassignment_answer"),
                   models.Index(fields=["collection", "assessor"], name="nuggetassignment_assessor"),
                   models.Index(fields=["user"], condition=Q(user__isnull=False), name="nuggetassignment_user"),
                   models.Index(fields=["machine_judge"], condition=Q(machine_judge__isnull=False),
                                name="nuggetassignment_machine")]

    def __str__(self) -> str:
        return f"{self.answer} {self.nugget_id} = {self.assignment} ({self.assessor})"


class SupportJudgment(_Record):
    """Whether a cited segment supports the sentence citing it."""

    class Value(models.TextChoices):
        FULL = "full_support", "Full support"
        PARTIAL = "partial_support", "Partial support"
        NONE = "no_support", "No support"

    sentence = models.ForeignKey(AnswerSentence, on_delete=models.CASCADE, related_name="support_judgments",
                                 db_index=False)  # the (sentence, docno) index leads with it
    docno = models.CharField(max_length=200, help_text="The cited segment.")
    support = models.CharField(max_length=16, choices=Value.choices)
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="revisions",
                                 db_index=False)  # its unique constraint is an index

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(support__in=["full_support", "partial_support", "no_support"]),
                                   name="supportjudgment_value_known"),
            models.UniqueConstraint(fields=["previous"], condition=Q(previous__isnull=False),
                                    name="supportjudgment_revised_once"),
            models.UniqueConstraint(fields=["client_token"], condition=Q(client_token__isnull=False),
                                    name="supportjudgment_token_once"),
        ]
        indexes = [models.Index(fields=["sentence", "docno"], name="supportjudgment_pair"),
                   models.Index(fields=["collection", "assessor"], name="supportjudgment_assessor"),
                   models.Index(fields=["user"], condition=Q(user__isnull=False), name="supportjudgment_user"),
                   models.Index(fields=["machine_judge"], condition=Q(machine_judge__isnull=False),
                                name="supportjudgment_machine")]

    def __str__(self) -> str:
        return f"{self.sentence} {self.docno} = {self.support} ({self.assessor})"


class AnswerPool(models.Model):
    class Kind(models.TextChoices):
        NUGGET = "nugget", "Answers for nugget assignment"
        SUPPORT = "support", "Citation pairs for support judging"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="answer_pools")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    params = models.JSONField(default=dict, blank=True, help_text="Which runs and topics it was built from.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["collection", "name"], name="answerpool_unique_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class AnswerPoolItem(models.Model):
    """An answer (nugget pool) or a citation pair, a sentence and a segment it cites (support pool)."""

    pool = models.ForeignKey(AnswerPool, on_delete=models.CASCADE, related_name="items")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    sentence = models.ForeignKey(AnswerSentence, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=200, blank=True)
    judging_order = models.PositiveIntegerField()

    class Meta:
        ordering = ["pool", "topic", "judging_order"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "answer", "sentence", "docno"], name="answerpoolitem_unique"),
            models.UniqueConstraint(fields=["pool", "answer"], condition=Q(sentence__isnull=True),
                                    name="answerpoolitem_unique_answer"),
        ]
        indexes = [models.Index(fields=["pool", "topic", "judging_order"], name="answerpoolitem_order")]

    def __str__(self) -> str:
        return f"{self.answer} {self.docno}".strip()


class AnswerTask(models.Model):
    """A topic of an answer pool given to one assessor: they judge every item of the pool on that topic."""

    pool = models.ForeignKey(AnswerPool, on_delete=models.CASCADE, related_name="tasks")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="answer_tasks")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "topic", "assessor"]
        constraints = [models.UniqueConstraint(fields=["pool", "topic", "assessor"], name="answertask_unique")]

    def __str__(self) -> str:
        return f"{self.pool.name} {self.topic.qid} → {self.assessor}"
