"""Pools built from stored runs: NIST's depth-k rule, extension, provenance, exports and statistics."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assignments import assignments_create
from judging.models import AssignmentItem
from judging.selectors import next_item_for
from judging.services import judgment_record
from pooling.models import Pool, PoolEntry, PoolProvenance
from pooling.selectors import pool_entries
from pooling.strategies import provenance_dicts
from tests import factories


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def track(db, tmp_path):
    """Topics 301-303; runs alpha, beta (contributing) and late (not contributing)."""
    collection = factories.collection_with_topics()
    rankings = {
        "alpha": {"301": ["a1", "a2", "s1", "a3"], "302": ["b1", "b2"]},
        "beta": {"301": ["s1", "c1", "c2", "c3"], "302": ["b2", "b3"]},
        "late": {"301": ["z1", "z2"], "302": ["z3"]},
    }
    for tag, ranking in rankings.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        run("import_runs", "robust", str(path), *(["--no-pool"] if tag == "late" else []))
    # the assessors' grades need a text to read (judging refuses a grade for a document without text)
    factories.add_documents(collection, sorted({d for r in rankings.values() for docs in r.values() for d in docs}))
    return collection


def pairs(collection) -> set[tuple[str, str]]:
    return set(PoolEntry.objects.filter(pool__collection=collection).values_list("topic__qid", "docno"))


def test_a_depth_pool_is_the_union_of_the_contributing_runs_top_k(track):
    out = run("build_pool", "robust", "--depth", "2", "--seed", "7")
    assert pairs(track) == {("301", "a1"), ("301", "a2"), ("301", "s1"), ("301", "c1"),
                            ("302", "b1"), ("302", "b2"), ("302", "b3")}
    assert "added 7 documents in round 1" in out and "seed 7" in out


def test_runs_without_a_team_are_each_a_team_of_their_own_when_pooling_runs_per_team(track):
    # TREC run files carry no team: --runs-per-team 1 must still pool every contributing run
    out = run("build_pool", "robust", "--depth", "2", "--runs-per-team", "1", "--seed", "7")
    assert pairs(track) == {("301", "a1"), ("301", "a2"), ("301", "s1"), ("301", "c1"),
                            ("302", "b1"), ("302", "b2"), ("302", "b3")}
    assert "from 2 runs" in out


def test_ties_are_pooled_in_file_order_and_the_rank_column_is_ignored(db, tmp_path):
    collection = factories.collection_with_topics()
    path = tmp_path / "tied.run"
    # equal scores: file order decides; the rank column (wrong on purpose) must not
    path.write_text("301 Q0 first 9 1.0 tied\n301 Q0 second 1 1.0 tied\n301 Q0 third 2 1.0 tied\n")
    run("import_runs", "robust", str(path))
    run("build_pool", "robust", "--depth", "2")
    assert pairs(collection) == {("301", "first"), ("301", "second")}


def provenance_of(pool) -> dict[tuple[str, str], dict[str, int]]:
    return provenance_dicts(pool_entries(pool)[1])


def test_provenance_records_which_run_retrieved_each_document_at_which_rank(track):
    run("build_pool", "robust", "--depth", "3")
    entry = PoolEntry.objects.get(topic__qid="301", docno="s1")
    provenance = provenance_of(Pool.objects.get())
    assert provenance[("301", "s1")] == {"alpha": 3, "beta": 1}
    assert entry.min_depth == 1
    assert set(provenance) == pairs(track), "every pooled document, and only those, has its runs"
    assert "late" not in {tag for by_tag in provenance.values() for tag in by_tag}, "a run that does not pool"


def test_an_extension_keeps_the_provenance_of_every_round(track):
    run("build_pool", "robust", "--depth", "1")
    run("build_pool", "robust", "--depth", "3")
    pool = Pool.objects.get()
    provenance = provenance_of(pool)
    assert provenance[("301", "a1")] == {"alpha": 1}
    assert provenance[("301", "s1")] == {"alpha": 3, "beta": 1}, "pooled in round 1 through beta, found by alpha in round 2"
    assert set(provenance) == pairs(track)
    rounds = dict(PoolEntry.objects.filter(pool=pool).values_list("docno", "round"))
    assert rounds["a1"] == 1 and rounds["c1"] == 2


def test_provenance_stored_on_entries_by_earlier_versions_is_still_read(track):
    run("build_pool", "robust", "--depth", "1")
    pool = Pool.objects.get()
    PoolProvenance.objects.filter(pool=pool).delete()
    PoolEntry.objects.filter(pool=pool, docno="a1").update(provenance={"alpha": 1})
    assert provenance_of(pool) == {("301", "a1"): {"alpha": 1}}


def test_the_judging_order_is_a_seeded_shuffle_not_the_rank_order(track):
    run("build_pool", "robust", "--depth", "4", "--seed", "11")
    first = list(PoolEntry.objects.filter(topic__qid="301").order_by("judging_order").values_list("docno", flat=True))
    Pool.objects.all().delete()
    run("build_pool", "robust", "--depth", "4", "--seed", "11")
    again = list(PoolEntry.objects.filter(topic__qid="301").order_by("judging_order").values_list("docno", flat=True))
    by_rank = list(PoolEntry.objects.filter(topic__qid="301").order_by("pool_rank").values_list("docno", flat=True))
    assert first == again, "the same seed gives the same order"
    assert first != by_rank, "assessors do not see rank order"


def test_extending_a_pool_adds_only_new_documents_and_keeps_judgments(track, assessor):
    run("build_pool", "robust", "--depth", "1", "--seed", "3")
    pool = Pool.objects.get()
    assignments_create(pool=pool, assessors=[assessor])
    item = AssignmentItem.objects.order_by("id").first()
    judgment_record(item_id=item.pk, user=assessor, grade=1, client_token="x")
    before = {(e.topic.qid, e.docno): e.judging_order for e in PoolEntry.objects.select_related("topic")}
    out = run("build_pool", "robust", "--depth", "3", "--seed", "3")
    after = {(e.topic.qid, e.docno): e.judging_order for e in PoolEntry.objects.select_related("topic")}
    assert "round 2" in out
    assert all(after[k] == v for k, v in before.items()), "existing entries keep their place"
    new_orders = [after[k] for k in after if k not in before and k[0] == "301"]
    assert min(new_orders) > max(v for k, v in before.items() if k[0] == "301")
    item.refresh_from_db()
    assert item.latest is not None
    assignments_create(pool=pool, assessors=[assessor])
    assert AssignmentItem.objects.filter(assignment__assessor=assessor).count() == len(after)


def test_only_the_named_runs_contribute_when_runs_are_given(track):
    run("build_pool", "robust", "--depth", "1", "--runs", "late")
    assert pairs(track) == {("301", "z1"), ("302", "z3")}


def test_an_unknown_run_tag_is_refused(track):
    with pytest.raises(CommandError, match="no run 'nope'"):
        run("build_pool", "robust", "--depth", "1", "--runs", "nope")
    assert not PoolEntry.objects.exists()


def test_fusion_pools_spend_exactly_the_budget(track):
    run("build_pool", "robust", "--strategy", "rrf", "--budget", "2", "--depth", "4")
    sizes = {q: PoolEntry.objects.filter(topic__qid=q).count() for q in ["301", "302"]}
    assert sizes == {"301": 2, "302": 2}
    assert ("301", "s1") in pairs(track), "the document both runs retrieved comes first in fused order"


def test_a_sampled_pool_records_inclusion_probabilities(track):
    run("build_pool", "robust", "--strategy", "sampled", "--strata", "1-1:1", "2-4:0.5", "--seed", "5")
    probabilities = set(PoolEntry.objects.values_list("stratum", "inclusion_probability"))
    assert (1, 1.0) in probabilities
    assert all(p == 1.0 if s == 1 else 0 < p <= 1 for s, p in probabilities)


def test_export_pool_prints_sorted_qid_docno_lines(track):
    run("build_pool", "robust", "--depth", "1")
    assert run("export_pool", "robust").splitlines() == ["301 a1", "301 s1", "302 b1", "302 b2"]


def test_pool_stats_reports_sizes_unique_documents_and_judged_fraction(track, tmp_path):
    run("build_pool", "robust", "--depth", "2")
    qrels = tmp_path / "q"
    qrels.write_text("301 0 s1 1\n301 0 a1 0\n")
    run("import_qrels", "robust", str(qrels))
    stats = json.loads(run("pool_stats", "robust"))
    assert stats["size"] == 7 and stats["topics"]["301"]["pool_size"] == 4
    assert stats["topics"]["301"]["judged"] == 2 and stats["topics"]["301"]["relevant"] == 1
    assert stats["runs"]["alpha"]["unique"] == 3  # a1, a2 on 301 and b1 on 302; b2 is shared
    assert stats["overlap"]["alpha"]["beta"] == 1  # b2 on topic 302
    assert stats["judged_fraction"] == round(2 / 7, 4)


def test_an_adaptive_pool_offers_the_next_document_after_each_judgment(track, assessor):
    out = run("build_pool", "robust", "--strategy", "mtf", "--budget", "3", "--depth", "4", "--seed", "1")
    assert "added 2 documents" in out, "one document per topic to start with"
    pool = Pool.objects.get()
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    judged = []
    for n in range(5):
        item = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()
        if item is None:
            break
        judgment_record(item_id=item.pk, user=assessor, grade=1, client_token=f"m{n}")
        judged.append(item.docno)
    assert len(judged) == 3, "the budget of three judgments is spent, then the queue ends"
    assert len(set(judged)) == 3


def test_a_depth_can_be_set_per_topic(track):
    run("build_pool", "robust", "--depth", "1", "--topic-depth", "301=3")
    assert {d for q, d in pairs(track) if q == "301"} == {"a1", "a2", "s1", "c1", "c2"}
    assert {d for q, d in pairs(track) if q == "302"} == {"b1", "b2"}


def test_a_per_topic_depth_for_an_unknown_topic_is_refused(track):
    with pytest.raises(CommandError, match="not in collection"):
        run("build_pool", "robust", "--depth", "1", "--topic-depth", "999=3")
    assert not PoolEntry.objects.exists()


def test_the_provenance_of_an_adaptive_pool_names_the_runs_of_each_offered_document(track):
    run("build_pool", "robust", "--strategy", "mtf", "--budget", "3", "--depth", "4", "--seed", "1")
    provenance = provenance_of(Pool.objects.get())
    assert set(provenance) == pairs(track), "one document per topic so far, each with its runs"
    rankings = {"alpha": {"301": ["a1", "a2", "s1", "a3"], "302": ["b1", "b2"]},
                "beta": {"301": ["s1", "c1", "c2", "c3"], "302": ["b2", "b3"]}}
    for (qid, docno), by_tag in provenance.items():
        assert by_tag == {tag: ranking[qid].index(docno) + 1 for tag, ranking in rankings.items()
                          if docno in ranking[qid]}


def test_an_adaptive_pool_does_not_ask_again_for_a_document_the_collection_has_judged(track, assessor):
    from judging.models import Judgment

    run("build_pool", "robust", "--strategy", "mtf", "--budget", "3", "--depth", "4", "--seed", "1",
        "--name", "probe")
    first = PoolEntry.objects.get(pool__name="probe", topic__qid="301").docno
    Judgment.objects.create(collection=track, topic=track.topics.get(qid="301"), docno=first, grade=1,
                            assessor="nist", source=Judgment.Source.IMPORT)
    run("build_pool", "robust", "--strategy", "mtf", "--budget", "3", "--depth", "4", "--seed", "1",
        "--name", "main")
    pool = Pool.objects.get(name="main")
    assert PoolEntry.objects.get(pool=pool, topic__qid="301").docno == first, "pooling reads no judgment"
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])  # judging tells the pool first
    offered = list(PoolEntry.objects.filter(pool=pool, topic__qid="301").order_by("judging_order")
                   .values_list("docno", flat=True))
    assert offered[0] == first and len(offered) == 2, "the judged document joins, the next one is offered"
    queue = list(AssignmentItem.objects.filter(assignment__assessor=assessor).values_list("docno", flat=True))
    assert first not in queue and offered[1] in queue
    for n in range(5):
        item = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()
        if item is None:
            break
        judgment_record(item_id=item.pk, user=assessor, grade=0, client_token=f"j{n}")
    assert PoolEntry.objects.filter(pool=pool, topic__qid="301").count() == 3, "the budget counts the judged one"
    assert AssignmentItem.objects.filter(assignment__assessor=assessor).count() == 2


def test_a_bigger_budget_offers_the_next_document_to_the_assessors_of_the_topic(track, assessor):
    run("build_pool", "robust", "--strategy", "mtf", "--budget", "1", "--depth", "4", "--seed", "1")
    pool = Pool.objects.get()
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    item = AssignmentItem.objects.get(assignment__assessor=assessor)
    judgment_record(item_id=item.pk, user=assessor, grade=1, client_token="first")
    assert not AssignmentItem.objects.filter(latest__isnull=True).exists(), "the budget of one is spent"
    out = run("build_pool", "robust", "--strategy", "mtf", "--budget", "2", "--depth", "4", "--seed", "1")
    assert "added 1 documents in round 2" in out, "one more on 301; 302's first still waits for a judgment"
    assert next_item_for(assessor) is not None, "the assessor asking for work gets the new document"
    queued = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True)
    assert [i.docno for i in queued] == list(PoolEntry.objects.filter(pool=pool, topic__qid="301")
                                             .order_by("judging_order").values_list("docno", flat=True))[1:]
