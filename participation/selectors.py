"""Reads for participants' and organizers' pages: a team's runs and their status, its results once
released (per topic against the best, median and worst of all runs; contribution to the pool; the
leave-one-team-out effect), the leaderboard as the organizer lets teams see it, and the overview."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count
from django.utils import timezone
from django.utils.crypto import salted_hmac

from answers.models import AnswerRun
from evaluation import board_files
from evaluation.board_leaderboard import board_covers, from_board
from evaluation.scoring import EvaluationError
from evaluation.selectors import leaderboard, leave_one_out, pool_statistics, run_report
from judging.models import Judgment
from participation.models import Submission, Team, Track
from pooling import selectors as pooling_selectors
from pooling.models import Pool

__all__ = ["contributions", "pooled_tags", "relative_time", "run_limit", "submissions_overview", "team_results",
           "team_runs", "track_dates", "visible_leaderboard"]


def run_limit(team: Team) -> dict:
    """The team's runs against the track's limit: ``used`` of ``limit`` (accepted runs, one per tag), their
    ``tags``, ``checking`` (submissions the checker has not read yet) and ``at_limit``."""
    accepted = sorted(Submission.objects.filter(team=team, status=Submission.Status.ACCEPTED)
                      .values_list("tag", flat=True))
    limit = team.track.max_runs_per_team
    return {"used": len(accepted), "limit": limit, "tags": accepted, "at_limit": len(accepted) >= limit,
            "left": max(limit - len(accepted), 0),
            "checking": Submission.objects.filter(team=team, status=Submission.Status.CHECKING).count()}


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def relative_time(when: datetime, now: datetime | None = None) -> str:
    """``when`` as a person says it from ``now``: "in 3 days", "5 hours ago", "in 12 minutes", "now"."""
    now = now or timezone.now()
    seconds = (when - now).total_seconds()
    size = abs(seconds)
    if size < 60:
        return "now"
    for unit, length in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if size >= length:
            text = _count(int(size / length + 0.5), unit)  # 47 h 59 min: "in 2 days"
            break
    return f"in {text}" if seconds > 0 else f"{text} ago"


def track_dates(track: Track, now: datetime | None = None) -> list[dict]:
    """The track's dates for its teams: when submissions open and the deadline (UTC, and from now)."""
    now = now or timezone.now()
    rows = []
    for label, when in (("Submissions open", track.opens_at), ("Deadline", track.closes_at)):
        if when is not None:
            rows.append({"label": label, "when": when, "relative": relative_time(when, now),
                         "past": when <= now})
    return rows


def pooled_tags(track: Track) -> set[str]:
    """Runs some pool of the collection was built from: "contributed", as the leaderboard and the release
    bundle say it (:func:`pooling.selectors.pooled_runs`)."""
    return pooling_selectors.pooled_runs(track.collection)


def _judged_at_10(track: Track, tags: list[str]) -> dict[str, float]:
    """judged@10 of these runs once judging has started (the share of each run's top 10 judged), from the
    stored board (the current version's, else the newest while the board job the last change asked for runs: a
    run that board does not hold has none until then). Never an evaluation of every run inside the team's page:
    that cost the web worker about 130 MB at 150 runs when the board job had not finished yet. A page never
    asks for a board."""
    if not tags or not Judgment.objects.filter(collection=track.collection).exists():
        return {}
    policy = "adjudicated"
    stored = board_files.current(track.collection, policy) or board_files.latest(track.collection, policy)
    known = [] if stored is None else [t for t in tags if t in stored.scores]
    if not known or not board_covers(["P.10"], stored):
        return {}
    return {r.tag: r.judged_at_10 for r in from_board(stored, measures=["P.10"], tags=known).runs}


def team_runs(team: Team) -> list[dict]:
    """The team's current runs (accepted submissions) with whether each is pooled and, once judging has
    started, its judged@10. An answer run (no ranked run) counts its answers (one a line) and their topics."""
    pooled = pooled_tags(team.track)
    rows = []
    accepted = list(Submission.objects.filter(team=team, status=Submission.Status.ACCEPTED).select_related("run"))
    answered = {tag: (n, topics) for tag, n, topics in AnswerRun.objects.filter(
        collection=team.track.collection, tag__in=[s.tag for s in accepted if s.run is None])
        .annotate(n=Count("answers")).values_list("tag", "n", "num_topics")}
    for s in accepted:
        lines, topics = (s.run.num_entries, s.run.num_topics) if s.run else answered.get(s.tag, (0, 0))
        rows.append({"submission": s, "tag": s.tag, "pooled": s.tag in pooled, "lines": lines, "topics": topics,
                     "answers": s.run is None and s.tag in answered})
    judged = _judged_at_10(team.track, [row["tag"] for row in rows])
    for row in rows:
        row["judged_at_10"] = judged.get(row["tag"])
    return sorted(rows, key=lambda row: (row["submission"].priority, row["tag"]))


def contributions(track: Track) -> dict[str, dict]:
    """Per run tag: pooled documents, unique ones and unique relevant ones (of the main pool)."""
    pool = Pool.objects.filter(collection=track.collection).order_by("created_at").first()
    if pool is None:
        return {}
    return pool_statistics(pool).get("runs", {})


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
    names and tags replaced by "another team" / "run N" (anonymous), or named.

    Anonymous labels are positions, unique even among tied runs: runs of equal rank are ordered by a keyed
    hash of their tag (stable from one visit to the next, and telling nothing about the tags), so two runs
    tied at rank 13 are "run 13" and "run 14"."""
    if track.leaderboard == Track.Leaderboard.HIDDEN:
        return None
    board = leaderboard(track.collection, measures=[measure])
    anonymous = track.leaderboard == Track.Leaderboard.ANONYMOUS
    runs = board.runs
    if anonymous:
        runs = sorted(runs, key=lambda r: (r.rank, _tie_key(track, r.tag)))
    rows = []
    for position, r in enumerate(runs, start=1):
        own = r.team == team.name
        rows.append({"rank": r.rank, "own": own, "value": r.measures.get(board.measures[0]),
                     "tag": r.tag if own or not anonymous else f"run {position}",
                     "team": r.team if own or not anonymous else "another team", "contributed": r.contributed})
    return rows


def _tie_key(track: Track, tag: str) -> str:
    """A stable order among tied runs that a participant cannot compute from the tags (keyed by the
    server's secret)."""
    return salted_hmac("participation.anonymous-label", f"{track.pk}:{tag}").hexdigest()
