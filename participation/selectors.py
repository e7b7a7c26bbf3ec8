"""Reads for participants' and organizers' pages: a team's runs and their status, its results once
released (per topic against the best, median and worst of all runs; contribution to the pool; the
leave-one-team-out effect), the leaderboard as the organizer lets teams see it, and the overview."""

from __future__ import annotations

from evaluation.scoring import EvaluationError
from evaluation.selectors import leaderboard, leave_one_out, run_report
from judging.models import Judgment
from judging.qrels import qrels
from participation.models import Submission, Team, Track
from pooling import selectors as pooling_selectors
from pooling.models import Pool

__all__ = ["contributions", "pooled_tags", "submissions_overview", "team_results", "team_runs",
           "visible_leaderboard"]


def pooled_tags(track: Track) -> set[str]:
    """Runs some pool of the collection was built from: "contributed", as the leaderboard and the release
    bundle say it (:func:`pooling.selectors.pooled_runs`)."""
    return pooling_selectors.pooled_runs(track.collection)


def _judged_at_10(track: Track, tags: list[str]) -> dict[str, float]:
    """judged@10 of these runs once judging has started (the share of each run's top 10 judged)."""
    if not tags or not Judgment.objects.filter(collection=track.collection).exists():
        return {}
    try:
        board = leaderboard(track.collection, measures=["P.10"], tags=tags)
    except (EvaluationError, ValueError):
        return {}
    return {r.tag: r.judged_at_10 for r in board.runs}


def team_runs(team: Team) -> list[dict]:
    """The team's current runs (accepted submissions) with whether each is pooled and, once judging has
    started, its judged@10."""
    pooled = pooled_tags(team.track)
    rows = []
    for s in Submission.objects.filter(team=team, status=Submission.Status.ACCEPTED).select_related("run"):
        rows.append({"submission": s, "tag": s.tag, "pooled": s.tag in pooled,
                     "lines": s.run.num_entries if s.run else 0, "topics": s.run.num_topics if s.run else 0})
    judged = _judged_at_10(team.track, [row["tag"] for row in rows])
    for row in rows:
        row["judged_at_10"] = judged.get(row["tag"])
    return sorted(rows, key=lambda row: (row["submission"].priority, row["tag"]))


def contributions(track: Track) -> dict[str, dict]:
    """Per run tag: pooled documents, unique ones and unique relevant ones (of the main pool)."""
    pool = Pool.objects.filter(collection=track.collection).order_by("created_at").first()
    if pool is None:
        return {}
    return pooling_selectors.pool_statistics(pool, qrels(track.collection)).get("runs", {})


def team_results(team: Team, *, measure: str = "map") -> dict:
    """What a team sees once results are released: per run, the per-topic report; the pool contributions;
    the leave-one-team-out table restricted to its own runs."""
    collection = team.track.collection
    tags = [row["tag"] for row in team_runs(team)]
    reports = {tag: run_report(collection, tag, measure=measure) for tag in tags}
    contributed = contributions(team.track)
    try:
        loo = leave_one_out(collection, measure=measure, by="team")
        own = loo.table[loo.table["team"] == team.name].to_dict("records")
    except (EvaluationError, ValueError):
        own = []
    return {"reports": reports, "contributions": {t: contributed.get(t) for t in tags}, "leave_one_out": own}


def submissions_overview(track: Track) -> list[dict]:
    """Every submission of the track for the organizer: team, tag, status, late or not, duplicates."""
    rows = []
    by_sha: dict[str, int] = {}
    submissions = list(Submission.objects.filter(team__track=track).select_related("team", "submitted_by"))
    for s in submissions:
        by_sha[s.sha256] = by_sha.get(s.sha256, 0) + 1
    for s in submissions:
        late = bool(track.closes_at and s.submitted_at > track.closes_at)
        rows.append({"submission": s, "team": s.team.name, "tag": s.tag or "—", "status": s.get_status_display(),
                     "late": late, "duplicate": by_sha[s.sha256] > 1, "problems": len(s.problems),
                     "warnings": len(s.warnings)})
    return rows


def visible_leaderboard(track: Track, team: Team, *, measure: str = "map") -> list[dict] | None:
    """The leaderboard as the organizer lets teams see it: None (hidden), or rows with other teams'
    names and tags replaced by "another team" / "run N" (anonymous), or named."""
    if track.leaderboard == Track.Leaderboard.HIDDEN:
        return None
    board = leaderboard(track.collection, measures=[measure])
    rows, anonymous = [], track.leaderboard == Track.Leaderboard.ANONYMOUS
    for r in board.runs:
        own = r.team == team.name
        rows.append({"rank": r.rank, "own": own, "value": r.measures.get(board.measures[0]),
                     "tag": r.tag if own or not anonymous else f"run {r.rank}",
                     "team": r.team if own or not anonymous else "another team", "contributed": r.contributed})
    return rows
