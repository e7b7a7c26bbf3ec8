"""Judgment pools: which (topic, document) pairs are judged, in what order, and why.

Provenance (which run retrieved a pooled document at which rank) is for organizers only: nothing an
assessor sees is derived from it. A build or extension stores the provenance of the entries it adds as
one columnar table (:class:`PoolProvenance`, see ``pooling.provenance``); entries added one at a time
(adaptive pools) and entries of pools built before that keep theirs on the entry
(``PoolEntry.provenance``). Read both through ``pooling.selectors.pool_entries``.
"""

from __future__ import annotations

from django.db import models

from pooling.strategies import registry
from workbench.models import Collection, Topic


def strategy_choices() -> list[tuple[str, str]]:
    """The registry's strategies (and "imported"): a callable, so that a new strategy needs no migration."""
    return registry.choices()


class PublishedPools(models.Manager):
    """Pools anyone may see: not one a split build is still writing (``pooling.split``: its parts write their
    topics' entries into a pool hidden until the build's join publishes it whole)."""

    def get_queryset(self):
        return super().get_queryset().filter(published=True)


class Pool(models.Model):
    class Order(models.TextChoices):
        SHUFFLED = "shuffled", "Shuffled (seeded)"
        POOL = "pool", "Pool rank"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="pools")
    name = models.SlugField(max_length=64, default="main")
    strategy = models.CharField(max_length=16, choices=strategy_choices, default="depth")
    params = models.JSONField(default=dict, blank=True)
    seed = models.BigIntegerField(default=0)
    order = models.CharField(max_length=16, choices=Order.choices, default=Order.SHUFFLED)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    published = models.BooleanField(
        default=True, db_default=True, help_text="False while a split build writes it: no page, export or queue sees it.")

    objects = PublishedPools()
    all_objects = models.Manager()  # with the pools being built (their builds and clean-up only)

    class Meta:
        ordering = ["collection", "name"]
        constraints = [models.UniqueConstraint(fields=["collection", "name"], name="pool_unique_name")]

    def __str__(self) -> str:
        return f"{self.collection.slug}/{self.name}"


class PoolEntry(models.Model):
    # A pool build writes 100,000s of entries at once, so an entry costs as little to write as it can: the
    # unique constraint (pool, topic, docno) is the only index besides the primary key, and the foreign
    # keys are not checked by the database row by row (on PostgreSQL that check took longer than
    # writing the rows). Django still deletes a pool's or a topic's entries with it (on_delete).
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="entries", db_index=False,
                             db_constraint=False)
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="pool_entries", db_index=False,
                              db_constraint=False)
    docno = models.CharField(max_length=200)
    judging_order = models.PositiveIntegerField(help_text="Position in the assessors' queue for the topic.")
    pool_rank = models.PositiveIntegerField(help_text="Position in the strategy's own order for the topic.")
    min_depth = models.PositiveIntegerField(null=True, blank=True,
                                            help_text="Best rank at which any run retrieved the document.")
    inclusion_probability = models.FloatField(default=1.0)
    stratum = models.PositiveIntegerField(null=True, blank=True)
    round = models.PositiveIntegerField(default=1, help_text="Build or extension that added the entry.")
    provenance = models.JSONField(
        null=True, blank=True, default=None,
        help_text="Run tag -> rank (1-based), for entries added one at a time; builds store theirs in "
                  "PoolProvenance.")
    relevant = models.BooleanField(
        null=True, blank=True, default=None,
        help_text="Adaptive pools: the judgment the strategy learnt of the document (relevant or not), as "
                  "judging gave it; empty while the document waits for one, and for fixed pools.")

    class Meta:
        ordering = ["pool", "topic", "judging_order"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "topic", "docno"], name="poolentry_unique_doc"),
            models.CheckConstraint(
                condition=models.Q(inclusion_probability__gt=0) & models.Q(inclusion_probability__lte=1),
                name="poolentry_probability_range"),
        ]

    def __str__(self) -> str:
        return f"{self.topic.qid} {self.docno}"


class PoolProvenance(models.Model):
    """The provenance of the entries one build or extension (``round``) added: which contributing run
    retrieved each pooled document at which rank, as one Arrow table (qid, docno, tag, rank)."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="provenance_tables")
    round = models.PositiveIntegerField()
    part = models.PositiveIntegerField(
        default=0, db_default=0, help_text="A build split by topic stores one table per part (its topics, in natural order).")
    rows = models.PositiveIntegerField(default=0, help_text="(document, run) pairs in the table.")
    table = models.BinaryField()  # Arrow IPC (LZ4) bytes; see pooling.provenance

    class Meta:
        ordering = ["pool", "round", "part"]
        verbose_name_plural = "pool provenance"
        constraints = [models.UniqueConstraint(fields=["pool", "round", "part"], name="poolprovenance_unique_part")]

    def __str__(self) -> str:
        return f"{self.pool} round {self.round}"


class CollectionFeatures(models.Model):
    """A collection's document features for active learning (``pooling.strategies.features``), computed once
    by the job that builds a ``cal`` pool: one ``.npz`` blob, valid while the documents are the same
    (``documents`` and ``last_document`` fingerprint them)."""

    collection = models.OneToOneField(Collection, on_delete=models.CASCADE, related_name="features")
    documents = models.PositiveIntegerField()
    last_document = models.PositiveBigIntegerField()
    data = models.BinaryField()
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "collection features"

    def __str__(self) -> str:
        return f"features of {self.collection} ({self.documents} documents)"


class PoolTopicState(models.Model):
    """A ``cal`` topic's stopping state and estimates as its last judgment left them
    (:meth:`pooling.strategies.cal.CalPool.status`), so that the pools page reads them rather than rebuilding
    every topic's model in the request (3.7 s for 50 topics of 100 judgments in a fresh web process)."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="topic_states")
    qid = models.CharField(max_length=64)
    status = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pool", "qid"], name="pool_topic_state_once")]

    def __str__(self) -> str:
        return f"{self.pool} topic {self.qid}"
