"""Writers and readers agree: whatever is written is read back identically (property-based)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.formats import FormatError, read_qrels, read_run, write_qrels, write_run

# identifiers: anything but the whitespace that separates fields and control characters (quotes, '#',
# non-ASCII are fine; see workbench.formats.identifiers)
identifier = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\t\n\v\f\r "),
                     min_size=1, max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def runs(draw):
    qids = draw(st.lists(identifier, min_size=1, max_size=4, unique=True))
    rows = []
    for qid in qids:
        docnos = draw(st.lists(identifier, min_size=1, max_size=8, unique=True))
        scores = draw(st.lists(finite, min_size=len(docnos), max_size=len(docnos)))
        rows += [(qid, d, r + 1, s) for r, (d, s) in enumerate(zip(docnos, scores, strict=True))]
    order = draw(st.permutations(range(len(rows))))
    return pd.DataFrame([rows[i] for i in order], columns=["qid", "docno", "rank", "score"])


@settings(max_examples=150, deadline=None)
@given(frame=runs(), tag=identifier)
def test_written_run_reads_back_identically(frame, tag):
    out = io.BytesIO()
    write_run(frame, tag, out)
    run = read_run(io.BytesIO(out.getvalue()), max_depth=None, check_warnings=True)
    assert run.tag == tag
    back = run.frame.assign(qid=run.frame["qid"].astype(str), docno=run.frame["docno"].astype(str))
    assert back["qid"].tolist() == frame["qid"].tolist()
    assert back["docno"].tolist() == frame["docno"].tolist()
    assert back["rank"].tolist() == frame["rank"].tolist()
    assert np.array_equal(back["score"].to_numpy(), frame["score"].to_numpy())


@st.composite
def qrels(draw):
    pairs = draw(st.lists(st.tuples(identifier, identifier), min_size=1, max_size=30, unique=True))
    grades = draw(st.lists(st.integers(-2, 4), min_size=len(pairs), max_size=len(pairs)))
    return pd.DataFrame([(q, d, g) for (q, d), g in zip(pairs, grades, strict=True)],
                        columns=["qid", "docno", "rel"])


@settings(max_examples=150, deadline=None)
@given(frame=qrels())
def test_written_qrels_read_back_sorted_by_qid_then_docno(frame):
    out = io.StringIO()
    write_qrels(frame, out)
    back = read_qrels(io.StringIO(out.getvalue()))
    expected = sorted(zip(frame["qid"], frame["docno"], frame["rel"], strict=True),
                      key=lambda row: (row[0].encode(), row[1].encode()))
    assert list(zip(back["qid"].astype(str), back["docno"], back["rel"], strict=True)) == expected


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["1", "2"]), st.sampled_from(["a", "b", "c", "dé", "x" * 60])),
                     min_size=1, max_size=12))
def test_duplicate_check_finds_exactly_the_repeated_pairs(rows):
    text = "".join(f"{q} Q0 {d} {i + 1} 1.0 t\n" for i, (q, d) in enumerate(rows))
    frame = pd.DataFrame(rows, columns=["qid", "docno"])
    expected = [i + 1 for i in np.flatnonzero(frame.duplicated().to_numpy())]
    try:
        read_run(io.StringIO(text), max_depth=None, check_warnings=False)
        found = []
    except FormatError as exc:
        found = [int(p.split(":")[1]) for p in exc.problems]
    assert found == expected
