"""``trec_eval`` on small files read without pyarrow (evaluation.engine.small_files) prints, byte for byte, what
the usual readers and ranking print: on clean files, on files the readers normalise, and on files they refuse
(which the small path must leave to them)."""

from __future__ import annotations

import io
import random

import pytest

from evaluation.engine import small_files
from evaluation.engine.cli import main

TOPICS = ["1", "2", "9", "10", "301", "a", "é"]
DOCS = ["d1", "d2", "d3", "D3", "d10", "doc-ü", "z", "Z-9", "fr94-1", "x"]
# ties as 32-bit floats (0.1 and 0.1000000001), signed zeros, a double beyond float's range
SCORES = ["1", "0.1", "0.1000000001", "2.5", "-0.0", "0", "0.0", "-3", "1e39", "-1e39", "17.25", "3e-05",
          "1000", "0.30000000000000004"]
GRADES = ["0", "1", "2", "3", "-1", "-2"]
OPTIONS = [[], ["-q"], ["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"], ["-q", "-J", "-m", "all_trec"],
           ["-q", "-M", "3", "-m", "all_trec"], ["-q", "-l", "2", "-m", "all_trec"], ["-q", "-m", "all_ext"],
           ["-q", "-M", "0", "-m", "P.1", "-m", "map"], ["-n", "-m", "ndcg_cut.3,5", "-m", "relstring.6"]]


def clean_files(rng: random.Random) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    topics = rng.sample(TOPICS, rng.randint(1, 4))
    qrels = [(t, d, rng.choice(GRADES)) for t in topics for d in rng.sample(DOCS, rng.randint(1, 6))]
    run_topics = rng.sample(TOPICS, rng.randint(1, 4))
    if rng.random() < 0.8:  # mostly topics in common
        run_topics = sorted(set(run_topics) | {topics[0]})
    run = [(t, d, rng.choice(SCORES)) for t in run_topics for d in rng.sample(DOCS, rng.randint(1, 8))]
    rng.shuffle(run)
    return qrels, run


def text(lines: list[list[str]], rng: random.Random, style: str) -> str:
    seps = {"space": [" "], "tab": ["\t"], "blanks": [" ", "\t", "  ", " \t ", "\x0b", "\x0c"]}[style]
    out = []
    for fields in lines:
        line = fields[0] + "".join(rng.choice(seps) + f for f in fields[1:])
        if style == "blanks":
            line = rng.choice(["", " ", "\t"]) + line + rng.choice(["", " ", "\r", " \r"])
            if rng.random() < 0.1:
                out.append(rng.choice(["", " ", "\t \r"]))  # a blank line
        out.append(line)
    return "\n".join(out) + rng.choice(["\n", ""])


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, out, err)
    return code, out.getvalue(), err.getvalue()


def both_paths(monkeypatch, args: list[str]) -> tuple[tuple, tuple]:
    small = run_cli(args)
    with monkeypatch.context() as patch:
        patch.setattr(small_files, "MAX_BYTES", -1)  # every file then goes to workbench.formats' readers
        usual = run_cli(args)
    return small, usual


@pytest.mark.parametrize("seed", range(40))
def test_clean_and_normalised_files_give_the_usual_output(tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    qrels, run = clean_files(rng)
    style = ["space", "tab", "blanks"][seed % 3]
    q, r, r2 = tmp_path / "qrels", tmp_path / "run", tmp_path / "run2"
    q.write_text(text([[t, "0", d, g] for t, d, g in qrels], rng, style))
    tags = ["mine", "other"]
    r.write_text(text([[t, "Q0", d, str(i + 1), s, rng.choice(tags)] + ["junk"] * (seed % 4 == 0)
                       for i, (t, d, s) in enumerate(run)], rng, style))
    r2.write_text(text([[t, "Q0", d, "1", s, "second"] for t, d, s in clean_files(rng)[1]], rng, "space"))
    assert small_files.read_qrels(str(q)) is not None and small_files.read_run(str(r)) is not None
    for options in OPTIONS:
        small, usual = both_paths(monkeypatch, [*options, str(q), str(r)])
        assert small == usual, options
    small, usual = both_paths(monkeypatch, ["-q", "-m", "all_trec", str(q), str(r), str(r2)])
    assert small == usual


@pytest.mark.parametrize(("qrels", "run"), [
    ("1 0 d1 1.5\n", "1 Q0 d1 1 1.0 t\n"),                    # a grade with decimals: a warning
    ("1 0 d1 +1\n", "1 Q0 d1 1 1.0 t\n"),
    ("1 0 d1 01\n", "1 Q0 d1 1 1.0 t\n"),
    ("1 0 d1 x\n", "1 Q0 d1 1 1.0 t\n"),
    ("1 0 d1\n", "1 Q0 d1 1 1.0 t\n"),
    ("1 0 d1 1 extra\n", "1 Q0 d1 1 1.0 t\n"),
    ("1 0 d1 1\n1 0 d1 0\n", "1 Q0 d1 1 1.0 t\n"),             # judged twice
    ("", "1 Q0 d1 1 1.0 t\n"),                                  # no judgment
    ("\n \n", "1 Q0 d1 1 1.0 t\n"),
    ("\ufeff1 0 d1 1\n", "1 Q0 d1 1 1.0 t\n"),                 # a byte order mark
    ("1 0 d\x01 1\n", "1 Q0 d1 1 1.0 t\n"),                    # a control character
    ("1 0 d1 99999999999999999999\n", "1 Q0 d1 1 1.0 t\n"),   # beyond int64
    ("1 0 d1 1\n", "1 Q0 d1 1 nan t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1 inf t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1 1e400 t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1 .5 t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1 +5 t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 x 1.0 t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1.0 1.0 t\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1 1.0\n"),
    ("1 0 d1 1\n", "1 Q0 d1 1 1.0 t\n1 Q0 d1 2 0.5 t\n"),     # a docno twice in a topic
    ("1 0 d1 1\n", ""),
    ("1 0 d1 1\n", "2 Q0 d1 1 1.0 t\n"),                       # no topic in common
    ("1 0 d1 1\n", "1 Q0 d1 1 1.0 t\n1 0 d2 1\n"),            # a qrels line in the run
])
def test_files_the_readers_refuse_or_warn_about_give_the_usual_output(tmp_path, monkeypatch, qrels, run):
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text(qrels)
    r.write_text(run)
    for options in ([], ["-q", "-m", "all_trec"]):
        small, usual = both_paths(monkeypatch, [*options, str(q), str(r)])
        assert small == usual


def test_invalid_utf8_missing_and_compressed_files_go_to_the_usual_readers(tmp_path, monkeypatch):
    import gzip

    q, r, z = tmp_path / "qrels", tmp_path / "run", tmp_path / "run.gz"
    q.write_bytes(b"1 0 d\xff 1\n")
    r.write_text("1 Q0 d1 1 1.0 t\n")
    z.write_bytes(gzip.compress(b"1 Q0 d1 1 1.0 t\n"))
    assert small_files.read_qrels(str(q)) is None and small_files.read_run(str(z)) is None
    for args in ([str(q), str(r)], [str(tmp_path / "missing"), str(r)], [str(r), str(tmp_path)]):
        small, usual = both_paths(monkeypatch, args)
        assert small == usual
    q.write_text("1 0 d1 1\n")
    small, usual = both_paths(monkeypatch, ["-q", str(q), str(z)])
    assert small == usual and small[0] == 0


def test_a_small_qrels_file_ranks_a_large_run_the_usual_way(tmp_path, monkeypatch):
    """The qrels read here, the run too large for here: the usual ranking on the small path's qrels."""
    rng = random.Random(7)
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("".join(f"{t} 0 d{d} {rng.choice([0, 1, 2, -1])}\n" for t in range(1, 6) for d in range(0, 200, 3)))
    lines = [f"{t} Q0 d{d} {d} {rng.choice(SCORES)} big\n" for t in range(1, 6) for d in range(300)]
    r.write_text("".join(lines) * 1 + "".join(f"9 Q0 pad{i} 1 1.0 big\n" for i in range(60_000)))
    assert r.stat().st_size > small_files.MAX_BYTES and small_files.read_qrels(str(q)) is not None
    small, usual = both_paths(monkeypatch, ["-q", "-m", "all_trec", str(q), str(r)])
    assert small == usual and small[0] == 0
