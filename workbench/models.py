"""The shared domain: collections, their topics, documents and participants' runs.

A run's ranked entries are not ORM rows: they are stored as one columnar (Arrow) blob per run
(``RunData``), so that pooling and evaluation read columnar arrays in one query, imports of
a million lines stay a single INSERT, and the data lives in the database's transaction
(an import that fails leaves nothing behind, on SQLite and PostgreSQL alike).
"""

from __future__ import annotations

import math
from itertools import pairwise
from urllib.parse import quote, urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator, URLValidator
from django.db import models
from django.db.models import Q

from workbench.formats import relevance

BINARY_SCALE = [
    {"grade": 0, "label": "Not relevant"},
    {"grade": 1, "label": "Relevant"},
]


def default_scale() -> list[dict]:
    return [dict(item) for item in BINARY_SCALE]


def validate_scale(value) -> None:
    if not isinstance(value, list) or len(value) < 2:
        raise ValidationError("A relevance scale needs at least two grades.")
    for item in value:
        _validate_grade(item)
    grades = [item["grade"] for item in value]
    if grades != sorted(set(grades)):
        raise ValidationError("Grades must be distinct and in increasing order.")
    gains = [scale_gain(item) for item in value if item["grade"] >= 0]
    if any(item.get("gain") is not None for item in value) and any(b <= a for a, b in pairwise(gains)):
        raise ValidationError("Gains must increase from one grade to the next.")


def _validate_grade(item) -> None:
    if not isinstance(item, dict) or not isinstance(item.get("grade"), int) or not item.get("label"):
        raise ValidationError("Each grade needs an integer 'grade' and a 'label'.")
    if not isinstance(item.get("description", ""), str):
        raise ValidationError("A grade's 'description' is text.")
    gain = item.get("gain")
    if gain is not None and (isinstance(gain, bool) or not isinstance(gain, int | float)
                             or not math.isfinite(gain) or gain < 0):
        raise ValidationError(f"Grade {item['grade']}'s gain must be a number >= 0.")


DOCNO_PLACEHOLDER = "{docno}"


def validate_document_url(value: str) -> None:
    """A document URL is an http(s) address with ``{docno}`` where the document's id goes."""
    if DOCNO_PLACEHOLDER not in value:
        raise ValidationError("The document URL must contain {docno} where the document's id goes, "
                              "e.g. https://example.org/doc/{docno}.")
    if urlsplit(value).scheme.lower() not in ("http", "https"):
        raise ValidationError("The document URL must start with http:// or https://.")
    URLValidator(schemes=["http", "https"], message="The document URL is not a valid web address.")(
        value.replace(DOCNO_PLACEHOLDER, "docno"))


def scale_gain(item: dict) -> float:
    """The gain of a grade of a scale: its ``gain`` if given, else the grade itself (at least 0). Negative
    grades (a document that could not be judged, spam) keep their meaning and are never gains."""
    gain = item.get("gain")
    return float(gain) if gain is not None else float(max(item["grade"], 0))


slug_validator = RegexValidator(r"^[a-z0-9][a-z0-9_-]*$", "Use lowercase letters, digits, '-' and '_'.")


class VisibleCollections(models.Manager):
    """Collections anyone may see: not the staging collection a part of a split import stores its runs in
    (``workbench.collections.run_imports.runs_stage``) until the import's join moves them into theirs."""

    def get_queryset(self):
        return super().get_queryset().filter(staging=False)


class Collection(models.Model):
    slug = models.SlugField(max_length=64, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    scale = models.JSONField(default=default_scale, validators=[validate_scale],
                             help_text="Ordered grades with labels, lowest first.")
    relevant_from = models.IntegerField(default=1, help_text="Lowest grade that counts as relevant.")
    max_depth = models.PositiveIntegerField(default=1000, validators=[MinValueValidator(1)],
                                            help_text="Most documents a run may return per topic.")
    researchers_may_download = models.BooleanField(default=False)
    guidelines = models.TextField(blank=True, default="", db_default="", help_text="Guidelines for assessors (Markdown), shown while they judge.")
    document_url = models.CharField(
        max_length=500, blank=True, default="", db_default="",
        help_text="Where a document can be read when the workbench holds no text for it, with {docno} in its "
                  "place, e.g. https://example.org/doc/{docno}.")
    judge_by_link = models.BooleanField(
        default=False, db_default=False,
        help_text="Assessors may judge a document without text from its page at the document URL.")
    created_at = models.DateTimeField(auto_now_add=True)
    staging = models.BooleanField(
        default=False, db_default=False, help_text="Holds a part of a split import's runs until its join moves them: seen by nobody.")
    organizers = models.ManyToManyField(
        "auth.User", blank=True, related_name="organized_collections",
        help_text="Who manages it (with the organizer role); none: every organizer does.")

    objects = VisibleCollections()
    all_objects = models.Manager()  # with the staging collections (split imports only)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def grades(self) -> list[int]:
        return [item["grade"] for item in self.scale]

    @property
    def grade_labels(self) -> dict[int, str]:
        return {item["grade"]: item["label"] for item in self.scale}

    @property
    def grade_descriptions(self) -> dict[int, str]:
        """What each grade means, as the organizer defined it (empty where not given)."""
        return {item["grade"]: item.get("description", "") for item in self.scale}

    @property
    def grade_gains(self) -> dict[int, float] | None:
        """Each grade's gain in the gain-based measures (nDCG, DCG, ERR, ...) when the organizer gave gains
        (e.g. 0, 0.6, 1), else None: the grades themselves are the gains, as in trec_eval."""
        if not any(item.get("gain") is not None for item in self.scale):
            return None
        return {item["grade"]: scale_gain(item) for item in self.scale if item["grade"] >= 0}

    @property
    def is_binary(self) -> bool:
        return len(self.scale) == 2

    def document_link(self, docno: str) -> str:
        """The page where ``docno`` can be read (the document URL with the docno in it), or "" when none is set."""
        if not self.document_url or urlsplit(self.document_url).scheme.lower() not in ("http", "https"):
            return ""  # a value that bypassed validation (e.g. set in a shell) never becomes a javascript: link
        return self.document_url.replace(DOCNO_PLACEHOLDER, quote(docno, safe=""))

    def is_relevant(self, grade):
        """The relevance rule, the one place it is written: a grade counts as relevant when it is at least
        ``relevant_from``. ``grade`` is a number (gives a bool) or an array/Series of grades (gives a boolean
        array/Series; NaN, an unjudged document, is not relevant)."""
        return relevance.is_relevant(grade, self.relevant_from)

    def clean(self) -> None:
        validate_scale(self.scale)
        errors = {}
        if self.relevant_from not in self.grades:
            errors["relevant_from"] = "Must be one of the scale's grades."
        if self.document_url:
            try:
                validate_document_url(self.document_url)
            except ValidationError as exc:
                errors["document_url"] = exc.messages
        if self.judge_by_link and not self.document_url:
            errors["judge_by_link"] = "Judging by link needs a document URL: give one above, or leave this off."
        if errors:
            raise ValidationError(errors)


class Topic(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="topics")
    qid = models.CharField(max_length=64)
    title = models.TextField(blank=True)
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["collection", "qid"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "qid"], name="topic_unique_qid"),
            models.CheckConstraint(condition=~Q(qid=""), name="topic_qid_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.qid}: {self.title}"


class Document(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    docno = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    text = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)
    length = models.PositiveIntegerField(default=0, help_text="Words in title and text: reading effort.")

    class Meta:
        ordering = ["collection", "docno"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "docno"], name="document_unique_docno"),
            models.CheckConstraint(condition=~Q(docno=""), name="document_docno_not_empty"),
        ]

    def __str__(self) -> str:
        return self.docno


class Run(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(max_length=200)
    team = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    source_file = models.CharField(max_length=500, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)
    contributes = models.BooleanField(default=True, help_text="Contributes documents to the pool.")
    run_type = models.CharField(max_length=32, blank=True, default="", db_default="",
                                help_text="automatic, manual, ... as the team declared it.")
    pool_priority = models.PositiveIntegerField(
        default=1, help_text="The team's priority for pooling: 1 is pooled first.")
    num_topics = models.PositiveIntegerField(default=0)
    num_entries = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, help_text="Checksum of the submitted file.")

    class Meta:
        ordering = ["collection", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "tag"], name="run_unique_tag"),
            models.CheckConstraint(condition=~Q(tag=""), name="run_tag_not_empty"),
        ]

    def __str__(self) -> str:
        return self.tag


class RunData(models.Model):
    """The ranked entries of a run as one columnar table (qid, docno, rank, score), grouped by topic,
    score descending, ties in file order (``workbench.collections.runstore``)."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, primary_key=True, related_name="data")
    table = models.BinaryField()  # Arrow IPC (Feather v2, LZ4) bytes; see workbench.collections.runstore
    #: each topic's first ``runstore.HEAD_DEPTH`` rows alone, in the same format (what a depth-k pool reads);
    #: empty when that is the whole table, and for runs stored before heads were
    head = models.BinaryField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "run data"


class Job(models.Model):
    """Long work (an import, a pool build, a release bundle) run in the background by ``db_worker``.

    The task that runs it (an app's ``tasks.py``) records its progress here, so that the page that
    started it can show where it is; a job that fails says why in one line. See ``workbench.jobs.lifecycle``.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=64, help_text="What the job does, e.g. 'release bundle'.")
    collection = models.ForeignKey(Collection, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="jobs")
    started_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="jobs")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    step = models.CharField(max_length=500, blank=True, help_text="What the job is doing now.")
    error = models.TextField(blank=True, help_text="Why the job failed, in one line.")
    result = models.JSONField(default=dict, blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="parts",
                               help_text="The job this one is a part of (a sub-job any worker claims).")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def shown_params(self) -> dict[str, str]:
        """The parameters a page shows, as text (not where the uploaded files wait on the server)."""
        def text(value) -> str:
            if isinstance(value, bool):
                return "yes" if value else "no"
            if isinstance(value, list | tuple):
                return ", ".join(text(v) for v in value)
            return "—" if value is None else str(value)

        flat = {**{k: v for k, v in self.params.items() if k not in ("directory", "arguments")},
                **(self.params.get("arguments") or {})}
        return {k.replace("_", " "): text(v) for k, v in flat.items() if v not in (None, "", [])}

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else (100 if self.status == "done" else 0)


class DuplicateClass(models.Model):
    """Documents of a collection found to be (near-)duplicates of a representative (``workbench.formats.neardup``).

    A *proposed* class is what detection found; the organizer *accepts* it (judgments of the representative are
    then propagated to the members, see ``judging.duplicates``) or *splits* it (its members are judged on their own;
    a split class propagates nothing)."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        ACCEPTED = "accepted", "Accepted"
        SPLIT = "split", "Split"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="duplicate_classes")
    representative = models.CharField(max_length=200)
    similarity = models.FloatField(help_text="Lowest estimated Jaccard similarity of a member to the representative.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    judge_members = models.BooleanField(
        default=False, help_text="Assessors judge the members too, though the class is accepted (its judgments "
                                 "are still propagated to members nobody judged).")
    threshold = models.FloatField()
    shingle = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["collection", "id"]
        constraints = [models.UniqueConstraint(fields=["collection", "representative"],
                                               name="duplicateclass_one_per_representative"),
                       models.CheckConstraint(condition=Q(similarity__gte=0) & Q(similarity__lte=1),
                                              name="duplicateclass_similarity_0_1")]

    def __str__(self) -> str:
        return f"{self.representative} (+{self.members.count()}, {self.status})"


class DuplicateMember(models.Model):
    """A document of a class other than its representative, with its similarity to the representative."""

    duplicate_class = models.ForeignKey(DuplicateClass, on_delete=models.CASCADE, related_name="members")
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=200)
    similarity = models.FloatField()

    class Meta:
        ordering = ["duplicate_class", "docno"]
        constraints = [models.UniqueConstraint(fields=["collection", "docno"], name="duplicatemember_one_class")]

    def __str__(self) -> str:
        return f"{self.docno} ~ {self.duplicate_class.representative} ({self.similarity:.2f})"


class CorpusReference(models.Model):
    """A corpus the collection points to instead of copying it (``workbench.corpora.corpus``): a documents file on
    this machine (TREC SGML, JSONL or TSV, plain or .gz, or Parquet), indexed once by docno, or an ir_datasets id
    (``irds:ID``) read through ir_datasets' own docstore. Only the documents judging needs are copied in."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting to be indexed"
        INDEXING = "indexing", "Indexing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="corpus_references")
    location = models.CharField(max_length=1000, help_text="A file's path, or irds:ID.")
    format = models.CharField(max_length=16, blank=True, help_text="trec, jsonl, tsv or parquet (found when indexed); irds.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    documents = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    indexed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["collection", "id"]
        constraints = [models.UniqueConstraint(fields=["collection", "location"], name="corpusreference_unique_location")]

    def __str__(self) -> str:
        return f"{self.location} ({self.status})"


from workbench.access.audit import AuditEntry  # noqa: E402,F401  the audit log's model (its own module)
from workbench.access.tokens import ApiToken  # noqa: E402,F401  personal API tokens (their own module)
