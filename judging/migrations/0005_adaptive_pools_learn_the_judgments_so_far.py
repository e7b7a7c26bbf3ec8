"""Adaptive pools built before the hand-off went one way (judging calls the pool with the judgments it
knows) keep what judging had told them: each entry's ``relevant`` from the collection's judgments. Here in
judging, the layer that reads judgments and points down at pooling, not in pooling's own migration."""

from django.db import migrations

#: the adaptive strategies when the field came (registry.adaptive_names() then)
ADAPTIVE = ["mtf", "maxmean", "bandit", "cal"]


def learn_the_judgments_so_far(apps, schema_editor):
    """An adaptive pool built before keeps what judging had told it (then read at each judgment): the latest
    non-machine judgment of each of its documents."""
    from workbench.formats.relevance import is_relevant

    Pool = apps.get_model("pooling", "Pool")
    PoolEntry = apps.get_model("pooling", "PoolEntry")
    Judgment = apps.get_model("judging", "Judgment")
    for pool in Pool.objects.filter(strategy__in=ADAPTIVE).select_related("collection"):
        entries = {(e.topic_id, e.docno): e for e in PoolEntry.objects.filter(pool=pool)}
        latest = {}
        for topic_id, docno, grade in (Judgment.objects.filter(collection_id=pool.collection_id)
                                       .exclude(source="machine").order_by("id")
                                       .values_list("topic_id", "docno", "grade")):
            if (topic_id, docno) in entries:
                latest[(topic_id, docno)] = grade
        for key, grade in latest.items():
            entries[key].relevant = grade is not None and bool(is_relevant(grade, pool.collection.relevant_from))
        PoolEntry.objects.bulk_update([entries[k] for k in latest], ["relevant"], batch_size=2000)



class Migration(migrations.Migration):

    dependencies = [
        ('judging', '0004_machine_assessors'),
        ('pooling', '0006_entry_relevant_as_the_pool_learnt_it'),
    ]

    operations = [
        migrations.RunPython(learn_the_judgments_so_far, migrations.RunPython.noop),
    ]
