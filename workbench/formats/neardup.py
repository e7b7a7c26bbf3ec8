"""Near-duplicate classes of documents: exact duplicates by hash first, then MinHash + LSH (Django-free).

Documents stream in batches of ``(docno, text)``; each text is lower-cased, split into words and cut into
word shingles of ``shingle`` words. Texts equal after that normalisation are *exact* duplicates (one 64-bit
hash per text). One text per exact group then gets a MinHash signature of ``num_perm`` values (datasketch's
``affine32`` scheme: its permutations and its finaliser, applied to a whole batch at once with numpy, so the
signature equals ``datasketch.MinHash(num_perm, seed, scheme="affine32")`` fed the same shingle hashes).
Signatures are cut into ``b`` bands of ``r`` rows (datasketch's optimal (b, r) for the threshold, false negatives weighted 0.9: candidates are checked anyway); texts that
share a band are candidates, and a candidate pair is kept when its estimated Jaccard similarity (the share of
equal signature values, kept as their low 16 bits: b-bit MinHash, Li & König 2010) is at least ``threshold``. Classes are formed greedily around representatives: a document
not yet in a class becomes a representative and takes every not-yet-classed document similar to it (the document with the most duplicates first), so each member is within ``threshold`` of its
representative.

Memory: ``2 * num_perm`` bytes of signature and ``8 * b`` bytes of band keys per text, plus the docnos
(about 500 MB for 1,000,000 passages at the defaults).

    >>> docs = [("a", "the cat sat on the mat today"), ("b", "The cat sat on the mat today."),
    ...         ("c", "something else entirely here")]
    >>> [(c.representative, c.members, c.similarity) for c in find_duplicates(docs)]
    [('a', ('b',), 1.0)]
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["DEFAULT_NUM_PERM", "DEFAULT_SHINGLE", "DEFAULT_THRESHOLD", "DuplicateClass", "Signatures",
           "class_pairs", "classes", "find_duplicates", "jaccard", "shingles"]

DEFAULT_THRESHOLD = 0.7
DEFAULT_SHINGLE = 3
DEFAULT_NUM_PERM = 128
#: documents per batch (signatures are computed for a whole batch at once)
BATCH = 20_000
#: a band bucket larger than this pairs its members with its first member only (no quadratic blow-up)
BUCKET_ALL_PAIRS = 32

_WORD = re.compile(r"\w+")
_MASK32 = np.uint64(0xFFFFFFFF)


class DuplicateClass(NamedTuple):
    representative: str
    members: tuple[str, ...]  # the other documents, in input order
    similarity: float  # lowest estimated Jaccard similarity of a member to the representative (1.0: exact)
    similarities: tuple[float, ...]  # each member's, in the order of ``members``

    def as_json(self) -> dict:
        return {"representative": self.representative, "members": list(self.members),
                "similarity": round(self.similarity, 4)}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def shingles(text: str, size: int = DEFAULT_SHINGLE) -> set[tuple[str, ...]]:
    """The word shingles of a text (a text shorter than ``size`` words is one shingle)."""
    words = _words(text)
    if len(words) < size:
        return {tuple(words)} if words else set()
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


def jaccard(a: str, b: str, size: int = DEFAULT_SHINGLE) -> float:
    """Exact Jaccard similarity of two texts' shingle sets (what the signatures estimate)."""
    sa, sb = shingles(a, size), shingles(b, size)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    return a.astype(np.uint32), b.astype(np.uint32)


def _fmix32(hv: np.ndarray) -> np.ndarray:
    from datasketch.minhash import _fmix

    return _fmix(hv, 32)


def _band_params(threshold: float, num_perm: int) -> tuple[int, int]:
    from datasketch.lsh import _optimal_param

    return _optimal_param(threshold, num_perm, 0.1, 0.9)  # candidates are checked: favour recall


def _batch_signatures(texts: list[str], size: int, a: np.ndarray, b: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(exact-text hash per text, MinHash signature per text as uint32 [n, num_perm])."""
    words_per_doc = [_words(t) for t in texts]
    lengths = np.fromiter((len(w) for w in words_per_doc), dtype=np.int64, count=len(texts))
    flat = np.array([w for ws in words_per_doc for w in ws], dtype=object)
    word_hash = pd.util.hash_array(flat) if len(flat) else np.zeros(0, dtype=np.uint64)
    # exact duplicates: one hash per normalised text (a rolling combination of its word hashes)
    normal = np.array([" ".join(ws) for ws in words_per_doc], dtype=object)
    exact = pd.util.hash_array(normal)
    # shingle hashes: combine ``size`` consecutive word hashes inside each document
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    n_sh = np.where(lengths >= size, lengths - size + 1, np.minimum(lengths, 1))
    total = int(n_sh.sum())
    doc_of = np.repeat(np.arange(len(texts)), n_sh)
    first = np.repeat(starts, n_sh) + (np.arange(total) - np.repeat(np.cumsum(n_sh) - n_sh, n_sh))
    width = np.minimum(lengths, size)[doc_of]
    sh = np.zeros(total, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(size):
            idx = np.minimum(first + k, len(word_hash) - 1) if len(word_hash) else first
            part = np.where(k < width, word_hash[idx] if len(word_hash) else 0, 0).astype(np.uint64)
            sh = sh * np.uint64(0x9E3779B97F4A7C15) + part
    hv = ((sh ^ (sh >> np.uint64(32))) & _MASK32).astype(np.uint32)
    with np.errstate(over="ignore"):
        hv = _fmix32(hv)
    num_perm = len(a)
    sig = np.full((len(texts), num_perm), np.iinfo(np.uint32).max, dtype=np.uint32)
    if total:
        step = max(1, 4_000_000 // num_perm)  # shingles per chunk: bounded temporary memory
        with np.errstate(over="ignore"):
            for lo in range(0, total, step):
                hi = min(total, lo + step)
                phv = hv[lo:hi, None] * a[None, :] + b[None, :]
                docs = doc_of[lo:hi]
                cut = np.flatnonzero(np.diff(docs)) + 1
                seg_starts = np.concatenate(([0], cut))
                mins = np.minimum.reduceat(phv, seg_starts, axis=0)
                rows = docs[seg_starts]
                sig[rows] = np.minimum(sig[rows], mins)
    return exact, sig


def _band_keys(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    keys = np.zeros((len(sig), bands), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bands):
            k = np.full(len(sig), np.uint64(j + 1), dtype=np.uint64)
            for i in range(j * rows, (j + 1) * rows):
                k = (k ^ sig[:, i].astype(np.uint64)) * np.uint64(0x100000001B3)
            keys[:, j] = k
    return keys


def _candidate_pairs(keys: np.ndarray) -> np.ndarray:
    """Pairs (i, j), i < j, that share a band key in at least one band; shape [m, 2]."""
    found = []
    for j in range(keys.shape[1]):
        col = keys[:, j]
        order = np.argsort(col, kind="stable")
        sorted_keys = col[order]
        same = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
        if not len(same):
            continue
        # bucket boundaries
        starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
        ends = np.concatenate((starts[1:], [len(col)]))
        sizes = ends - starts
        for s, e, n in zip(starts[sizes > 1], ends[sizes > 1], sizes[sizes > 1], strict=True):
            members = np.sort(order[s:e])
            if n <= BUCKET_ALL_PAIRS:
                ii, jj = np.triu_indices(n, 1)
                found.append(np.stack([members[ii], members[jj]], axis=1))
            else:
                found.append(np.stack([np.full(n - 1, members[0]), members[1:]], axis=1))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.concatenate(found).astype(np.int64)
    return np.unique(pairs, axis=0)


def _concatenated(parts: list[np.ndarray]) -> np.ndarray:
    """One array of the parts, which are released as they are copied (lower peak memory)."""
    whole = np.empty((sum(len(p) for p in parts), *parts[0].shape[1:]), dtype=parts[0].dtype)
    at = 0
    while parts:
        part = parts.pop(0)
        whole[at:at + len(part)] = part
        at += len(part)
    return whole


class Signatures:
    """Step 1 of detection: what reading the documents leaves behind (docnos, exact-text hashes, emptiness, band
    keys and 16-bit signatures, one row per document, in input order), batch by batch. Documents may be read in
    slices (each on its own worker) whose signatures travel as bytes (:meth:`to_bytes`, plain numpy arrays)
    and are joined in order (:meth:`add_bytes`): the classes (:func:`classes`) are those of one reading."""

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD, shingle: int = DEFAULT_SHINGLE,
                 num_perm: int = DEFAULT_NUM_PERM, seed: int = 1) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], not {threshold}")
        if shingle < 1 or num_perm < 2:
            raise ValueError("shingle must be at least 1 and num_perm at least 2")
        self.threshold, self.shingle = threshold, shingle
        self.a, self.b = _permutations(num_perm, seed)
        self.bands, self.rows = _band_params(threshold, num_perm)
        self.docnos: list[str] = []
        self.exact, self.empty, self.keys, self.sig = [], [], [], []

    def __len__(self) -> int:
        return len(self.docnos)

    def add(self, batch: list[tuple[str, str]]) -> None:
        texts = [t or "" for _, t in batch]
        exact, sig = _batch_signatures(texts, self.shingle, self.a, self.b)
        self.docnos.extend(d for d, _ in batch)
        self.exact.append(exact)
        self.empty.append(np.fromiter((not _WORD.search(t) for t in texts), dtype=bool, count=len(texts)))
        self.keys.append(_band_keys(sig, self.bands, self.rows))
        self.sig.append(sig.astype(np.uint16))  # b-bit MinHash (b = 16) is enough to estimate similarity

    def read(self, documents: Iterable[tuple[str, str]], *, batch: int = BATCH,
             progress: Callable[[int], None] | None = None) -> Signatures:
        """Add ``documents`` (``(docno, text)``) in batches of ``batch``; ``progress(n)`` after each batch with
        the documents read so far."""
        buffer: list[tuple[str, str]] = []
        for item in documents:
            buffer.append(item)
            if len(buffer) >= batch:
                self.add(buffer)
                buffer = []
                if progress is not None:
                    progress(len(self.docnos))
        if buffer:
            self.add(buffer)
            if progress is not None:
                progress(len(self.docnos))
        return self

    def to_bytes(self) -> bytes:
        """The signatures read so far as an ``.npz`` of plain arrays (no pickled objects)."""
        names = [d.encode() for d in self.docnos]
        whole = {"exact": (self.exact, np.uint64, ()), "empty": (self.empty, bool, ()),
                 "keys": (self.keys, np.uint64, (self.bands,)), "sig": (self.sig, np.uint16, (len(self.a),))}
        arrays = {k: np.concatenate(v) if v else np.zeros((0, *shape), dtype=t) for k, (v, t, shape) in whole.items()}
        buffer = io.BytesIO()
        np.savez(buffer, **arrays, shape=np.array([self.shingle, len(self.a), self.bands, self.rows]),
                 docno_lengths=np.fromiter(map(len, names), dtype=np.int64, count=len(names)),
                 docno_bytes=np.frombuffer(b"".join(names), dtype=np.uint8))
        return buffer.getvalue()

    def add_bytes(self, data: bytes) -> None:
        """Append signatures kept with :meth:`to_bytes` (by the same parameters), after those already here."""
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            if found["shape"].tolist() != [self.shingle, len(self.a), self.bands, self.rows]:
                raise ValueError("signatures computed with other parameters (shingle, num_perm, threshold)")
            if not len(found["exact"]):
                return
            ends = np.cumsum(found["docno_lengths"]).tolist()
            names = found["docno_bytes"].tobytes()
            self.docnos.extend(names[s:e].decode() for s, e in zip([0, *ends[:-1]], ends, strict=True))
            for name in ("exact", "empty", "keys", "sig"):
                getattr(self, name).append(found[name])


def _exact_leaders(exact: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """For each text, the first text equal to it (itself when first; empty texts stand alone)."""
    n = len(exact)
    order = np.lexsort((np.arange(n), exact))
    keyed = exact[order]
    head = np.concatenate(([True], keyed[1:] != keyed[:-1]))
    group_first = order[np.maximum.accumulate(np.where(head, np.arange(n), 0))]
    leader = np.empty(n, dtype=np.int64)
    leader[order] = group_first
    leader[empty] = np.flatnonzero(empty)
    return leader


def _similar_pairs(found: Signatures, distinct: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of distinct texts (as indexes of all texts) whose estimated similarity is at least ``threshold``."""
    keys = _concatenated(found.keys)[distinct]
    pairs = _candidate_pairs(keys)
    del keys
    sig = _concatenated(found.sig)[distinct]
    sims = np.zeros(len(pairs))
    for lo in range(0, len(pairs), 100_000):
        p = pairs[lo:lo + 100_000]
        sims[lo:lo + 100_000] = (sig[p[:, 0]] == sig[p[:, 1]]).mean(axis=1)
    keep = sims >= threshold
    return distinct[pairs[keep]], sims[keep]


def _classes(docnos: list[str], neighbours: dict[int, list[tuple[int, float]]],
             exact_members: dict[int, list[int]]) -> list[DuplicateClass]:
    """Classes around representatives: the document with the most duplicates first (ties: input order)."""
    assigned: set[int] = set()
    classes: list[tuple[int, DuplicateClass]] = []

    def degree(i: int) -> int:
        return len(exact_members.get(i, [])) + sum(1 + len(exact_members.get(m, [])) for m, _ in neighbours.get(i, []))

    for rep in sorted(set(neighbours) | set(exact_members), key=lambda i: (-degree(i), i)):
        if rep in assigned:
            continue
        members = [(m, 1.0) for m in exact_members.get(rep, [])]
        for m, s in sorted(neighbours.get(rep, [])):
            if m not in assigned:
                members.append((m, s))
                members.extend((e, s) for e in exact_members.get(m, []))
        members = [(m, s) for m, s in sorted(members) if m not in assigned and m != rep]
        if not members:
            continue
        assigned.add(rep)
        assigned.update(m for m, _ in members)
        similarities = tuple(float(s) for _, s in members)
        classes.append((rep, DuplicateClass(docnos[rep], tuple(docnos[m] for m, _ in members), min(similarities),
                                            similarities)))
    return [c for _, c in sorted(classes)]


def classes(found: Signatures) -> list[DuplicateClass]:
    """Step 2 of detection: the duplicate classes of the documents read (in their order), by LSH on their
    signatures. Classes come in the order of their representatives."""
    if not found.docnos:
        return []
    # 1. exact duplicates: the first document of each group of equal texts stands for the group
    empty = np.concatenate(found.empty)
    leader = _exact_leaders(np.concatenate(found.exact), empty)
    n = len(leader)
    distinct = np.flatnonzero((leader == np.arange(n)) & ~empty)
    # 2. near duplicates among distinct texts: LSH bands, then the estimated similarity of each candidate
    pairs, sims = _similar_pairs(found, distinct, found.threshold)
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for (i, j), s in zip(pairs.tolist(), sims.tolist(), strict=True):
        neighbours.setdefault(i, []).append((j, s))
        neighbours.setdefault(j, []).append((i, s))
    exact_members: dict[int, list[int]] = {}
    for i in np.flatnonzero(leader != np.arange(n)).tolist():
        exact_members.setdefault(int(leader[i]), []).append(i)
    return _classes(found.docnos, neighbours, exact_members)


def find_duplicates(documents: Iterable[tuple[str, str]], *, threshold: float = DEFAULT_THRESHOLD,
                    shingle: int = DEFAULT_SHINGLE, num_perm: int = DEFAULT_NUM_PERM, seed: int = 1,
                    batch: int = BATCH, progress: Callable[[int], None] | None = None) -> list[DuplicateClass]:
    """Duplicate classes of ``documents`` (an iterable of ``(docno, text)``, read in batches of ``batch``):
    :class:`Signatures` read, then :func:`classes`.

    ``threshold`` (0 < t <= 1) is the estimated Jaccard similarity of ``shingle``-word shingle sets above which
    two texts are duplicates. Empty texts are never duplicates. ``progress(n)`` is called after each batch
    with the documents read so far. Classes come in the order of their representatives.
    """
    found = Signatures(threshold=threshold, shingle=shingle, num_perm=num_perm, seed=seed)
    return classes(found.read(documents, batch=batch, progress=progress))


def class_pairs(classes: Iterable[DuplicateClass]) -> set[frozenset[str]]:
    """Every unordered pair of documents that share a class (for precision and recall against a truth)."""
    found: set[frozenset[str]] = set()
    for c in classes:
        everyone = (c.representative, *c.members)
        for i, x in enumerate(everyone):
            for y in everyone[i + 1:]:
                found.add(frozenset((x, y)))
    return found
