"""The evaluation report a background job writes: every run scored per topic and on average, and the
leave-one-out experiment by run and by team, as one zip for organizers' scripts and spreadsheets."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from evaluation.leaderboard import leaderboard
from evaluation.release import Bundle
from evaluation.reusability import leave_one_out, leave_one_out_joined, leave_one_out_share
from judging.policies import DEFAULT_POLICY
from workbench.models import Collection

__all__ = ["evaluation_report", "report_joined", "report_section", "report_sections"]


def _leaderboard_csv(board) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "team", "contributed", "rank", *board.measures, "judged_at_10", "flags"])
    for r in board.runs:
        writer.writerow([r.tag, r.team, "yes" if r.contributed else "no", r.rank,
                         *(r.measures.get(n, "") for n in board.measures), r.judged_at_10, "; ".join(r.flags)])
    return out.getvalue()


def _per_topic_csv(data: dict) -> str:
    """Long format: run, measure, topic, value (trec_eval -q's content, one line per value)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "measure", "topic", "value"])
    for run in data["runs"]:
        for topic, values in (run.get("per_topic") or {}).items():
            for measure, value in values.items():
                writer.writerow([run["run"], measure, topic, "" if value is None else value])
    return out.getvalue()


def _board_files(collection: Collection, measures, policy: str) -> dict[str, str]:
    board = leaderboard(collection, measures=measures, qrels_policy=policy)
    data = board.as_dict(per_topic=True)
    return {"leaderboard.json": json.dumps(data, indent=1) + "\n", "leaderboard.csv": _leaderboard_csv(board),
            "per_topic.csv": _per_topic_csv(data)}


def evaluation_report(collection: Collection, *, measures: Sequence[str] | None = None,
                      policy: str = DEFAULT_POLICY, loo_measure: str = "map",
                      step: Callable[[str], None] = lambda text: None) -> Bundle:
    step("scoring every run")
    files = _board_files(collection, measures, policy)
    for by in ("run", "team"):
        step(f"leaving each {by} out of the pool")
        if collection.runs.filter(contributes=True).exists():
            files[f"leave_one_{by}_out.csv"] = leave_one_out(collection, measure=loo_measure, by=by,
                                                              qrels_policy=policy).table.to_csv(index=False)
    return _zipped(collection, files)


def _zipped(collection: Collection, files: dict[str, str]) -> Bundle:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"{collection.slug}-evaluation/{name}", text)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
    return Bundle(filename=f"{collection.slug}-evaluation-{stamp}.zip", data=buffer.getvalue(), files={})


# --- the same report as a job split into parts (workbench.subjobs): part i of k computes the i-th of k slices
# of the runs (teams) left out, by run and by team (what both re-score is read once per worker), and the
# first part the leaderboard too; joined, the parts give the report above, file for file.

def report_sections(collection: Collection, *, shares: int) -> list[dict]:
    """The parts of the report: ``shares`` slices of the leave-one-out (one part when nothing is left out)."""
    shares = shares if collection.runs.filter(contributes=True).exists() else 1
    return [{"share": i, "shares": shares, "board": i == 0} for i in range(shares)]


def report_section(collection: Collection, section: dict, *, measures: Sequence[str] | None = None,
                   policy: str = DEFAULT_POLICY, loo_measure: str = "map") -> dict:
    """One part's output (JSON data): its slice of each leave-one-out, and the leaderboard's files in the first."""
    found: dict = {"files": _board_files(collection, measures, policy) if section["board"] else {}}
    if collection.runs.filter(contributes=True).exists():
        for by in ("run", "team"):
            found[by] = leave_one_out_share(collection, measure=loo_measure, by=by, qrels_policy=policy,
                                            part=section["share"], parts=section["shares"])
    return found


def report_joined(collection: Collection, outputs: list, *, loo_measure: str = "map") -> Bundle:
    """The report from its parts' outputs, in the parts' order."""
    files = dict(outputs[0]["files"])
    for by in ("run", "team"):
        if by in outputs[0]:
            files[f"leave_one_{by}_out.csv"] = leave_one_out_joined(
                collection, measure=loo_measure, by=by, shares=[out[by] for out in outputs]).table.to_csv(index=False)
    return _zipped(collection, files)
