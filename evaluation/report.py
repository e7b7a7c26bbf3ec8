"""The evaluation report a background job writes: every run scored per topic and on average, and the
leave-one-out experiment by run and by team, as one zip for organizers' scripts and spreadsheets."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from evaluation import cache
from evaluation.leaderboard import leaderboard
from evaluation.release import Bundle
from evaluation.report_topics import topic_joined, topic_part, topic_sections
from evaluation.reusability import leave_one_out
from judging.policies import DEFAULT_POLICY
from workbench.formats import spreadsheet
from workbench.models import Collection

__all__ = ["evaluation_report", "report_joined", "report_section", "report_sections"]


def _leaderboard_csv(board) -> str:
    out = io.StringIO()
    writer = spreadsheet.writer(out, lineterminator="\n")
    writer.writerow(["run", "team", "contributed", "rank", *board.measures, "judged_at_10", "flags"])
    for r in board.runs:
        writer.writerow([r.tag, r.team, "yes" if r.contributed else "no", r.rank,
                         *(r.measures.get(n, "") for n in board.measures), r.judged_at_10, "; ".join(r.flags)])
    return out.getvalue()


def _per_topic_csv(data: dict) -> str:
    """Long format: run, measure, topic, value (trec_eval -q's content, one line per value)."""
    out = io.StringIO()
    writer = spreadsheet.writer(out, lineterminator="\n")
    writer.writerow(["run", "measure", "topic", "value"])
    for run in data["runs"]:
        for topic, values in (run.get("per_topic") or {}).items():
            for measure, value in values.items():
                writer.writerow([run["run"], measure, topic, "" if value is None else value])
    return out.getvalue()


def _board_files(collection: Collection, measures, policy: str, board=None) -> dict[str, str]:
    board = board or leaderboard(collection, measures=measures, qrels_policy=policy)
    data = board.as_dict(per_topic=True)
    return {"leaderboard.json": json.dumps(data, indent=1) + "\n", "leaderboard.csv": _leaderboard_csv(board),
            "per_topic.csv": _per_topic_csv(data)}


def evaluation_report(collection: Collection, *, measures: Sequence[str] | None = None,
                      policy: str = DEFAULT_POLICY, loo_measure: str = "map",
                      step: Callable[[str], None] = lambda text: None) -> Bundle:
    with cache.one_version():  # every file of one version of the collection (its state read once)
        step("scoring every run")
        files = _board_files(collection, measures, policy)
        for by in ("run", "team"):
            step(f"leaving each {by} out of the pool")
            if collection.runs.filter(contributes=True).exists():
                files[f"leave_one_{by}_out.csv"] = spreadsheet.frame_csv(leave_one_out(
                    collection, measure=loo_measure, by=by, qrels_policy=policy).table, index=False)
    return _zipped(collection, files)


def _zipped(collection: Collection, files: dict[str, str]) -> Bundle:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"{collection.slug}-evaluation/{name}", text)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
    return Bundle(filename=f"{collection.slug}-evaluation-{stamp}.zip", data=buffer.getvalue(), files={})


# --- the same report as a job split by topic (workbench.jobs.subjobs; evaluation.report_topics): part i of k reads,
# ranks and scores the i-th of k slices of the topics; joined, the parts give the report above, file for file.

def report_sections(collection: Collection, *, shares: int) -> list[dict]:
    """The parts of the report: ``shares`` slices of the judged topics."""
    return topic_sections(collection, shares=shares)


def report_section(collection: Collection, section: dict, *, measures: Sequence[str] | None = None,
                   policy: str = DEFAULT_POLICY, loo_measure: str = "map") -> bytes:
    """One part's output: its topics' values (:func:`evaluation.report_topics.topic_part`)."""
    return topic_part(collection, section, measures=measures, policy=policy, loo_measure=loo_measure)


def report_joined(collection: Collection, outputs: list, *, measures: Sequence[str] | None = None,
                  policy: str = DEFAULT_POLICY, loo_measure: str = "map") -> Bundle:
    """The report from its parts' outputs, in the parts' order."""
    with cache.one_version():
        board, tables = topic_joined(collection, outputs, measures=measures, policy=policy, loo_measure=loo_measure)
        files = _board_files(collection, measures, policy, board)
    for by, table in tables.items():
        files[f"leave_one_{by}_out.csv"] = table
    return _zipped(collection, files)
