"""The hand-checked track the evaluation tests share (see test_evaluate.py for its scores)."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from tests import factories

RANKINGS = {
    "alpha": {"301": ["a", "b", "c", "d"], "302": ["e", "f"]},
    "beta": {"301": ["b", "x", "a"], "302": ["f", "g"]},
    "late": {"301": ["z", "a"], "302": ["h", "f"]},
}
QRELS = {("301", "a"): 1, ("301", "b"): 0, ("301", "x"): 1, ("302", "e"): 0, ("302", "f"): 1, ("302", "g"): 0}
MAP = {"alpha": 0.5, "beta": (0.5 + 2 / 3) / 2 / 2 + 0.5, "late": 0.375}


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def write_qrels(path, judgments: dict) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in judgments.items()))
    return str(path)


def build_track(tmp_path, *, teams=None, pool_depth: int | None = 2, qrels=QRELS, assessor="nist"):
    """Collection "robust" with the runs above, a depth pool and the qrels imported as ``assessor``."""
    collection = factories.collection_with_topics()
    teams = teams or {}
    for tag, ranking in RANKINGS.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        run("import_runs", "robust", str(path), "--team", teams.get(tag, tag),
            *(["--no-pool"] if tag == "late" else []))
    if pool_depth:
        run("build_pool", "robust", "--depth", str(pool_depth))
    run("import_qrels", "robust", write_qrels(tmp_path / "qrels.txt", qrels), "--assessor", assessor)
    return collection
