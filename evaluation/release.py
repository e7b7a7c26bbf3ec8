"""Exports: qrels files, the pool file, and the release bundle researchers download.

The bundle is a zip of plain files (topics, qrels, per-assessor qrels, the pool with its strategy and
parameters, the run list with contributed flags, agreement figures, the leaderboard) and a README
with the counts and a SHA-256 checksum of every file, so that a downloaded collection can be
verified and cited.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd

from evaluation import release_parts, scoring
from evaluation.inferred import sampled_qrels, sampled_qrels_lines
from evaluation.judge_card import JUDGE_CARD, judge_card, wants_judge_card
from evaluation.pool_estimates import collection_recall_estimates, estimates_tsv
from judging import qrels as judged
from judging import selectors as judging_selectors
from judging.duplicates import qrels_with_duplicates
from judging.exchange import judgments_jsonl
from pooling import selectors as pooling_selectors
from workbench.formats import spreadsheet, write_qrels
from workbench.formats.ids import sorted_topics
from workbench.models import Collection


def qrels_text(collection: Collection, *, policy: str = "adjudicated", assessor: str | None = None,
               binary: bool = False, duplicates: bool = False) -> str:
    """TREC qrels (``qid 0 docno rel``) sorted by topic then document; ``binary`` maps grades at or
    above the collection's relevant grade to 1 and the rest to 0. ``duplicates``: NIST's "with duplicates"
    qrels, with the grades propagated inside accepted near-duplicate classes (``judging.duplicates``); without
    it (the default) propagated grades are never included."""
    if duplicates and assessor is None:
        frame = qrels_with_duplicates(collection, policy=policy)
    else:
        frame = judged.qrels(collection, assessor=assessor, policy=policy)
    if binary:
        frame = frame.assign(rel=collection.is_relevant(frame["rel"]).astype("int64"))
    buffer = io.StringIO()
    write_qrels(frame, buffer)
    return buffer.getvalue()


def pool_text(collection: Collection, name: str = "main") -> str:
    pool = pooling_selectors.pool_named(collection, name)
    if pool is None:
        return ""
    pairs = pooling_selectors.pool_pairs(pool)
    return "".join(f"{q} {d}\n" for q, d in zip(pairs["qid"], pairs["docno"], strict=True))


def pools_text(collection: Collection) -> str:
    """pool.txt of the bundle and of the downloads page: the (topic, document) pairs of every pool of the collection (the runs
    ``runs.csv`` says contributed are the runs these pools were built from), natural topic order."""
    pools = list(collection.pools.order_by("name"))
    frames = [pooling_selectors.pool_pairs(pool) for pool in pools]
    frames = [f for f in frames if len(f)]
    if not frames:
        return ""
    pairs = pd.concat(frames, ignore_index=True).drop_duplicates(["qid", "docno"])
    order = {q: i for i, q in enumerate(sorted_topics(pairs["qid"].unique()))}
    pairs = pairs.assign(_t=pairs["qid"].map(order)).sort_values(["_t", "docno"], kind="stable")
    return "".join(f"{q} {d}\n" for q, d in zip(pairs["qid"], pairs["docno"], strict=True))


def _csv(frame: pd.DataFrame) -> str:
    return spreadsheet.frame_csv(frame, index=False, lineterminator="\n")


def _topics_jsonl(collection: Collection) -> str:
    lines = []
    for topic in collection.topics.order_by("id"):
        record = {"qid": topic.qid, "title": topic.title, "description": topic.description,
                  "narrative": topic.narrative, **({"extra": topic.extra} if topic.extra else {})}
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + ("\n" if lines else "")


def _runs_csv(collection: Collection, contributed: dict[str, bool]) -> str:
    """Every run: ``contributed`` (a pool was built from it: the leaderboard's flag) and ``offered`` (it was
    marked to contribute, i.e. eligible; a per-team limit may still have left it out)."""
    buffer = io.StringIO()
    writer = spreadsheet.writer(buffer, lineterminator="\n")
    writer.writerow(["tag", "team", "contributed", "offered_to_pool", "pool_priority", "topics", "entries",
                     "source_file", "sha256", "description"])
    for run in collection.runs.order_by("tag"):
        writer.writerow([run.tag, run.team, "yes" if contributed.get(run.tag) else "no",
                         "yes" if run.contributes else "no", run.pool_priority, run.num_topics,
                         run.num_entries, run.source_file, run.sha256, run.description])
    return buffer.getvalue()


def _pool_json(collection: Collection) -> dict:
    pools = []
    for pool in collection.pools.order_by("name"):
        entries, _ = pooling_selectors.pool_entries(pool)
        pools.append({
            "name": pool.name, "strategy": pool.strategy, "seed": pool.seed, "judging_order": pool.order,
            "params": {k: v for k, v in pool.params.items() if k != "history"},
            "history": pool.params.get("history", []),
            "documents": int(len(entries)),
            "rounds": int(entries["round"].max()) if len(entries) else 0,
            "per_topic": {str(q): int(n) for q, n in entries.groupby("qid").size().items()} if len(entries) else {},
        })
    return {"pools": pools}


@dataclass(frozen=True)
class Bundle:
    filename: str
    data: bytes
    files: dict[str, str]  # name -> sha256


def release_bundle(collection: Collection, *, policy: str = "adjudicated",
                   extra_files: dict[str, str] | None = None) -> Bundle:
    """The release zip of a collection (see the module docstring)."""
    contributed = pooling_selectors.contributed_runs(collection)
    files: dict[str, str] = {
        "topics.jsonl": _topics_jsonl(collection),
        "qrels.txt": qrels_text(collection, policy=policy),
        "qrels.binary.txt": qrels_text(collection, policy=policy, binary=True),
        "runs.csv": _runs_csv(collection, contributed),
        "pool.txt": pools_text(collection),
        "pool.json": json.dumps(_pool_json(collection), indent=2) + "\n",
        "judgments.jsonl": judgments_jsonl(collection),
    }
    if collection.propagated_judgments.exists():  # NIST's "with duplicates" file, beside the qrels it extends
        files["qrels.with-duplicates.txt"] = qrels_text(collection, policy=policy, duplicates=True)
    judgments = judged.assessor_judgments(collection)
    for assessor in sorted(judgments["assessor"].unique()) if len(judgments) else []:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in assessor)
        files[f"qrels-by-assessor/{safe}.txt"] = qrels_text(collection, assessor=assessor)
    sample = sampled_qrels(collection, policy=policy)
    if sample:  # the stratified sample in sample_eval.pl's format: xinfAP and infNDCG can be recomputed
        files["qrels.sampled.txt"] = "".join(f"{line}\n" for line in sampled_qrels_lines(sample))
    estimates = collection_recall_estimates(collection, policy=policy)
    if len(estimates):  # pools with a random component: relevant documents and recall, estimated per topic
        files["recall_estimates.tsv"] = estimates_tsv(estimates)
    report = judging_selectors.agreement_report(collection)
    if len(report["pairs"]):
        files["agreement/pairs.csv"] = _csv(report["pairs"])
        files["agreement/topics.csv"] = _csv(report["topics"])
    if wants_judge_card(policy):  # how the machine labels in these qrels were made and checked
        files[JUDGE_CARD] = json.dumps(judge_card(collection, policy=policy), indent=2) + "\n"
    contributed_files = release_parts.files_for(collection, policy)  # what apps above evaluation add (answers)
    files.update(release_parts.texts(contributed_files))
    files.update(extra_files or {})
    checksums = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}
    files["README.md"] = _readme(collection, files, checksums, policy, contributed,
                                 release_parts.readme_lines(contributed_files))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"{collection.slug}/{name}", text)
    stamp = datetime.now(UTC).strftime("%Y%m%d")
    return Bundle(filename=f"{collection.slug}-release-{stamp}.zip", data=buffer.getvalue(), files=checksums)


def _completeness_lines(collection: Collection) -> list[str]:
    state = scoring.completeness(collection)  # on the main pool, as the leaderboard counts it
    lines = [f"- topics fully judged (every document of the main pool): {len(state.complete)}"]
    if state.partial:
        lines.append(f"- topics partly judged: {len(state.partial)} — " + ", ".join(
            f"{qid} ({done} of {pooled})" for qid, (done, pooled) in state.partial.items())
            + "; their unjudged pooled documents count as non-relevant")
    if state.unjudged:
        lines.append(f"- pooled topics with no judgment yet: {len(state.unjudged)} ({', '.join(state.unjudged)})")
    return lines


def _count_lines(text: str) -> int:
    return text.count("\n")


def _file_lines(collection: Collection, files: dict[str, str], policy: str) -> list[str]:
    """The README's list of files: exactly the ones the zip holds."""
    scale = ", ".join(f"{g['grade']} = {g['label']}" for g in collection.scale)
    by_assessor = any(name.startswith("qrels-by-assessor/") for name in files)
    agreement = sorted(name for name in files if name.startswith("agreement/"))
    return [
        "## Files",
        "",
        f"- `qrels.txt`: TREC qrels, graded ({scale}); per document the {'adjudicated grade where an organizer set one, else the ' if policy == 'adjudicated' else ''}majority of the assessors' grades (ties to the lower grade).",
        f"- `qrels.binary.txt`: the same with grade >= {collection.relevant_from} as 1, else 0.",
        *(["- `qrels.with-duplicates.txt`: `qrels.txt` plus the grades propagated from a judged document to its "
           "near-duplicates nobody judged (NIST's \"with duplicates\" qrels; classes accepted by the organizer). "
           "`qrels.txt` holds no propagated grade."] if "qrels.with-duplicates.txt" in files else []),
        *(["- `qrels-by-assessor/`: each assessor's own grades (imported qrels count as an assessor named after "
           "the file)."] if by_assessor else []),
        "- `topics.jsonl`: one topic per line (qid, title, description, narrative).",
        "- `runs.csv`: every run with its team, whether it contributed to the pool (`contributed`: a pool "
        "was built from it, as the leaderboard flags it) and whether it was offered to the pool "
        "(`offered_to_pool`: eligible; a per-team limit may have left it out). Runs that did not "
        "contribute are scored on judgments they did not help to make: compare them with care.",
        "- `pool.txt` / `pool.json`: the pooled (topic, document) pairs (of every pool of the collection), and "
        "how each pool was built (strategy, parameters with the runs offered and the runs pooled, seed, rounds).",
        *([f"- {' and '.join(f'`{name}`' for name in agreement)}: agreement between assessors who judged the "
           "same documents (per pair of assessors, and per topic)."] if agreement else []),
        *([f"- `{JUDGE_CARD}`: the judge card: each machine judge whose labels these qrels use (models and "
           "versions or file digests, prompt hashes, calibration set size, Cohen's kappa against the human "
           "qrels with each side's share of relevant) and, per topic, how many lines are human grades and how "
           "many machine ones."] if JUDGE_CARD in files else []),
        "- `judgments.jsonl`: every judgment record, oldest first: grade or \"cannot judge\", the assessor's "
        "comment and supporting passage, time spent, and which record revised which (`manage.py "
        "import_judgments` reads it back).",
        *(["- `recall_estimates.tsv`: per topic of each pool with a random component (sampled strata; a cal "
           "pool whose stopping rule judges a random sample on the side), the relevant documents estimated "
           "(`relevant_estimate`, 95% interval `relevant_low`-`relevant_high`) and the pool's recall so far "
           "(`recall`, `recall_low`-`recall_high`), from `judged` documents with `found` relevant of which "
           "`sample_judged` / `sample_relevant` in the random sample; `method` says how each was computed. "
           "Empty: no estimate yet (no relevant document in the sample, a stratum not judged)."]
          if "recall_estimates.tsv" in files else []),
        *(["- `qrels.sampled.txt`: the stratified sample behind the leaderboard's xinfAP and infNDCG, in NIST's "
           "sample_eval.pl format (`topic 0 docno stratum grade`, -1: in the population, not sampled); "
           "`manage.py xinfap` or sample_eval.pl recompute them."] if "qrels.sampled.txt" in files else []),
    ]


def _readme(collection: Collection, files: dict[str, str], checksums: dict[str, str], policy: str,
            contributed: dict[str, bool], about: list[str] | tuple = ()) -> str:
    """The bundle's README: it names only the files the zip holds (``files``)."""
    qrels = judged.qrels(collection, policy=policy)
    relevant = int(collection.is_relevant(qrels["rel"]).sum()) if len(qrels) else 0
    pooled = sorted(tag for tag, c in contributed.items() if c)
    lines = [
        f"# {collection.name} ({collection.slug})",
        "",
        collection.description or "",
        "",
        f"Released {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by the pooling workbench.",
        "",
        "## Counts",
        "",
        f"- topics: {collection.topics.count()}",
        f"- documents held by the workbench: {collection.documents.count()}",
        f"- runs: {len(contributed)} ({len(pooled)} contributed to the pool)",
        *([f"- runs that contributed to the pool: {', '.join(pooled)}"] if 0 < len(pooled) <= 30 else []),
        f"- judgments in qrels.txt: {len(qrels)} on {qrels['qid'].nunique() if len(qrels) else 0} topics, "
        f"{relevant} relevant (grade >= {collection.relevant_from})",
        f"- pooled documents (pool.txt): {_count_lines(files['pool.txt'])}",
        *_completeness_lines(collection),
        "",
        *_file_lines(collection, files, policy),
        *about,
        "",
        "Unjudged documents count as non-relevant in trec_eval's measures; use bpref or condensed-list measures "
        "for runs with many unjudged documents.",
        "",
        "## Checksums (SHA-256)",
        "",
        *[f"    {digest}  {name}" for name, digest in sorted(checksums.items())],
        "",
    ]
    return "\n".join(lines)
