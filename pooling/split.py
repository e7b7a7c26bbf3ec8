"""A new depth-k pool built by topic, in parts any worker claims (``workbench.jobs.subjobs``).

The planner creates the pool hidden (``Pool.published`` false: no page, export, queue or count sees it) and
cuts the collection's topics, in natural order, into pieces (``PIECES_PER_PART`` per part); part ``i`` of ``n``
has pieces ``i``, ``i + n``, ... A part reads its topics' lines of every run once and ranks them once, then
pools each piece as one worker would (``strategies.depth.depth_pools``: a depth-k pool of a topic depends only
on that topic's lines, and which runs contribute on the runs' teams and priorities; only each topic's first k
rows are read) and writes the piece's entries into the hidden pool in its turn (``workbench.jobs.turns``): after
the piece before it, so that the entries go into their table in index order, as from one worker, while the
other parts pool their next pieces. Each piece's
provenance is its own table of the round, numbered by the piece (one worker stores the round's table ordered
by topic: the pieces' tables read one after the other are that table). The join records the build's
parameters and publishes the pool. Writing the entries (about 4 million at 1,000 runs: most of a build) thus
overlaps the pooling, and nobody sees a pool half-written: a build that fails removes its hidden pool.

Only new pools are split: extending a pool (a deeper round) takes what the pool holds into account and is
done by one worker, as are the other strategies (they read below depth k, or learn as judgments come).
A part done again (its worker died) first removes what it wrote of its topics.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from django.db import transaction

from pooling import services
from pooling.entries import PoolRefused, prepare_round
from pooling.models import Pool, PoolEntry, PoolProvenance
from pooling.preview import offered_rows
from pooling.strategies import registry
from pooling.strategies.depth import depth_pools
from workbench.collections.selectors import run_frames
from workbench.formats.ids import sorted_topics
from workbench.jobs.turns import Turns
from workbench.models import Collection, Job

__all__ = ["PIECES_PER_PART", "discard", "plan", "publish", "write_part"]

#: a part's topics are pooled and written in this many pieces, in turn with the other parts (workbench.jobs.turns)
PIECES_PER_PART = 8


def plan(job: Job, arguments: dict, parts: int) -> list[dict]:
    """The parts of a split build (slices of the topics), its pool created hidden; [] when the build is not
    split (another strategy, an existing pool, too few runs or topics, or a build the one worker refuses)."""
    collection = job.collection
    strategy = registry.STRATEGIES.get(arguments.get("strategy", registry.names()[0]))
    if parts <= 1 or strategy is None or not strategy.splits_by_topic or not isinstance(arguments.get("depth"), int):
        return []
    name = arguments.get("name", "main")
    if Pool.objects.filter(collection=collection, name=name).exists():
        return []
    try:
        tags = [tag for tag, _, _ in offered_rows(collection, arguments.get("tags"))]
    except PoolRefused:
        return []  # the build says why, in one line
    qids = sorted_topics(collection.topics.values_list("qid", flat=True))
    if len(tags) < 2 * parts or len(qids) < 2:
        return []
    hidden = services.building(collection, name)
    if hidden is not None and hidden.params.get("building") != job.pk:
        return []  # another job builds it: the build refuses, in one line
    if hidden is None:
        Pool.all_objects.create(collection=collection, name=name, strategy=strategy.name, seed=arguments.get("seed", 0),
                                order=arguments.get("order", "shuffled"), published=False,
                                params={"building": job.pk})
    return _pieces(qids, min(parts, len(qids)))


def _pieces(qids: list[str], parts: int) -> list[dict]:
    """The parts' parameters: the topics cut into pieces in natural order, dealt to the parts in turn."""
    count = min(len(qids), parts * PIECES_PER_PART)
    pieces = [qids[i * len(qids) // count:(i + 1) * len(qids) // count] for i in range(count)]
    return [{"topics": [q for piece in pieces[i::parts] for q in piece],
             "pieces": [{"piece": p, "topics": pieces[p]} for p in range(i, count, parts)]} for i in range(parts)]


def _hidden(job: Job) -> Pool:
    return Pool.all_objects.get(collection=job.collection, name=job.params["arguments"].get("name", "main"))


def write_part(part: Job) -> dict:
    """Pool the runs on the part's topics and write their entries and provenance into the hidden pool, piece by
    piece in turn with the other parts (``workbench.jobs.turns``); what the join needs (entries written, the build's
    parameters, a refusal if any). A part planned without pieces (by an earlier version) is one piece."""
    pieces = part.params.get("pieces") or [{"piece": part.params["part"], "topics": part.params["topics"]}]
    with Turns(part.parent_id, [piece["piece"] for piece in pieces]) as turns:  # from the start: the next waits
        return _pool_and_write(part, pieces, turns)


def _pool_and_write(part: Job, pieces: list[dict], turns: Turns) -> dict:
    parent, qids = part.parent, list(part.params["topics"])
    arguments = parent.params["arguments"]
    pool = _hidden(parent)
    collection = pool.collection
    tags = arguments.get("tags")
    frames = run_frames(collection, tags=tags or None, contributing_only=not tags, topics=qids,
                        depth=arguments["depth"])
    frames, teams, priorities = services.runs_for(collection, tags, frames)
    strategy = registry.get(arguments.get("strategy", registry.names()[0]))
    request = registry.PoolParams(depth=arguments["depth"], seed=arguments.get("seed", 0), teams=teams,
                                  priorities=priorities, runs_per_team=arguments.get("runs_per_team"))
    results = depth_pools(frames, request.depth, [piece["topics"] for piece in pieces], **request.selection())
    result = next(results)
    params = services.fixed_params(services.build_params(
        frames, depth=arguments["depth"], runs_per_team=arguments.get("runs_per_team"),
        seed=arguments.get("seed", 0), order=arguments.get("order", "shuffled")), strategy, result, request)
    said = {"params": params, "entries": 0, "topics": 0, "refused": _unknown_topics(collection, frames, params)}
    if said["refused"]:
        return said
    numbers = [piece["piece"] for piece in pieces]
    with transaction.atomic():  # done again (its worker died): what it wrote is replaced
        PoolEntry.objects.filter(pool=pool, topic__in=collection.topics.filter(qid__in=qids)).delete()
        PoolProvenance.objects.filter(pool=pool, round=1, part__in=numbers).delete()
        for number in numbers:  # a piece written in its turn; the next pooled while another part writes
            write = prepare_round(pool, result, round_no=1, new_pool=True, part=number)
            with turns.turn(number):
                entries, topics = write()
            said["entries"], said["topics"] = said["entries"] + entries, said["topics"] + topics
            result = next(results, None)
    return said


def _unknown_topics(collection: Collection, frames: dict, params: dict) -> str:
    """The refusal of a build whose pooled runs name topics the collection does not have ("" if none): each
    run's qids are known from its table's dictionary, whatever topics the part read."""
    named: set[str] = set()
    for tag in params["runs"] or []:
        qid = frames[tag]["qid"]
        named.update(map(str, qid.cat.categories if isinstance(qid.dtype, pd.CategoricalDtype) else qid.unique()))
    missing = sorted(named - set(collection.topics.values_list("qid", flat=True)), key=lambda q: (len(q), q))
    if not missing:
        return ""
    return f"runs name topics that are not in collection {collection.slug!r}: {', '.join(missing[:10])}"


def publish(job: Job, outputs: Sequence[dict]) -> services.PoolBuildSummary:
    """Publish the hidden pool of a split build from its parts' outputs (a refusal removes it)."""
    pool = _hidden(job)
    refused = next((said["refused"] for said in outputs if said["refused"]), "")
    if refused:
        discard(job)
        raise PoolRefused(refused)
    params = outputs[0]["params"]
    if not pool.published:
        with transaction.atomic():
            services.record(pool, dict(params))
            Pool.all_objects.filter(pk=pool.pk).update(published=True)
        pool.refresh_from_db()
    added = sum(said["entries"] for said in outputs)
    return services.PoolBuildSummary(pool=pool, added=added, total=added, topics=sum(s["topics"] for s in outputs),
                                     runs=sorted(params["runs"] or []), round=1, offered=len(params["offered"]))


def discard(job: Job) -> None:
    """Remove the hidden pool of a split build that failed (nothing of it was ever seen)."""
    Pool.all_objects.filter(collection=job.collection, name=job.params["arguments"].get("name", "main"),
                            published=False).delete()
