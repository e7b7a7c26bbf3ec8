"""Near-duplicate classes on a generated corpus with planted exact and near duplicates (known truth)."""

from __future__ import annotations

import random

import pytest

from workbench.formats.neardup import Signatures, class_pairs, classes, find_duplicates, jaccard


def planted_corpus(n_docs: int = 3000, n_exact: int = 60, n_near: int = 120, seed: int = 7):
    """Random 60-word passages; ``n_exact`` copies (case and punctuation changed) and ``n_near`` copies with
    two words replaced; returns (documents, true classes as sets of docnos)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    docs = [(f"d{i}", " ".join(rng.choice(vocab) for _ in range(60))) for i in range(n_docs)]
    truth: dict[str, set[str]] = {}
    for k in range(n_exact):
        src, text = docs[rng.randrange(n_docs)]
        docs.append((f"x{k}", text.upper() + " !"))
        truth.setdefault(src, {src}).add(f"x{k}")
    for k in range(n_near):
        src, text = docs[rng.randrange(n_docs)]
        words = text.split()
        for _ in range(2):
            words[rng.randrange(len(words))] = rng.choice(vocab)
        docs.append((f"n{k}", " ".join(words)))
        truth.setdefault(src, {src}).add(f"n{k}")
    rng.shuffle(docs)
    true_pairs = set()
    for members in truth.values():
        ms = sorted(members)
        true_pairs |= {frozenset((x, y)) for i, x in enumerate(ms) for y in ms[i + 1:]}
    return docs, true_pairs


def test_planted_duplicates_are_found_with_precision_and_recall_of_at_least_095():
    docs, true_pairs = planted_corpus()
    classes = find_duplicates(docs, batch=500)  # several batches: streaming gives the same classes
    found = class_pairs(classes)
    precision = len(found & true_pairs) / len(found)
    recall = len(found & true_pairs) / len(true_pairs)
    print(f"planted pairs {len(true_pairs)}, found {len(found)}: precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.95 and recall >= 0.95
    assert classes == find_duplicates(docs, batch=100_000)


def test_each_member_is_within_the_threshold_of_its_representative_and_exact_copies_score_one():
    docs, _ = planted_corpus(n_docs=500, n_exact=10, n_near=10, seed=3)
    text = dict(docs)
    classes = find_duplicates(docs)
    assert classes
    for c in classes:
        for m, s in zip(c.members, c.similarities, strict=True):
            assert s >= 0.7
            assert abs(jaccard(text[c.representative], text[m]) - s) < 0.15
    assert any(c.similarity == 1.0 for c in classes)


def test_a_higher_threshold_keeps_exact_copies_and_drops_near_ones():
    docs = [("a", "one two three four five six seven eight nine ten eleven twelve"),
            ("b", "ONE two three four five six seven eight nine ten eleven twelve."),
            ("c", "one two three four five six seven eight nine ten eleven thirteen"),
            ("d", ""), ("e", "")]
    assert [c.as_json() for c in find_duplicates(docs, threshold=1.0)] == [
        {"representative": "a", "members": ["b"], "similarity": 1.0}]
    loose = find_duplicates(docs, threshold=0.6)
    assert loose[0].members == ("b", "c")  # empty texts are never duplicates


def test_a_threshold_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="threshold"):
        find_duplicates([("a", "x")], threshold=1.5)


def test_signatures_read_in_slices_and_kept_as_bytes_give_the_classes_of_one_reading():
    docs, _ = planted_corpus(n_docs=900, n_exact=20, n_near=40, seed=5)
    docs += [("empty", ""), ("ünï", docs[0][1])]  # an empty text, and a docno beyond ASCII
    slices = [docs[:300], [], docs[300:700], docs[700:]]  # one slice empty (every document of it decided)
    kept = [Signatures(threshold=0.7, shingle=3).read(s, batch=128).to_bytes() for s in slices]
    assert all(b"pickle" not in data for data in kept)
    joined = Signatures(threshold=0.7, shingle=3)
    for data in kept:
        joined.add_bytes(data)
    assert joined.docnos == [d for d, _ in docs]
    assert classes(joined) == find_duplicates(docs)
    with pytest.raises(ValueError, match="other parameters"):
        Signatures(threshold=0.9, shingle=3).add_bytes(kept[0])
