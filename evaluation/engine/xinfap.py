"""xinfAP, infNDCG and the inferred precisions of a run against a stratified sample of judgments, exactly as
NIST's ``sample_eval.pl`` computes them (Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling method
for estimating AP and NDCG", SIGIR 2008; the script's version of 10 Oct 2011). Django-free.

Qrels: ``topic iter docno stratum grade`` lines, one per document of the sampled population; a grade
``>= 0`` means the document was sampled and judged (``> 0`` relevant), a negative grade (-1) that it is in
the population but was not sampled. Per topic and stratum ``h``: ``N_h`` documents, ``n_h`` sampled, ``r_h``
sampled relevant (``r_hg`` of grade ``g``).

* ``inum_rel = R = sum_h r_h N_h / n_h`` (Horvitz-Thompson); ``R_g`` the same per grade.
* The run is ranked by score descending, ties by docno descending, its first 1,000 documents kept. At the
  relevant document at rank ``k`` (of stratum ``c``), with ``d`` the population documents above it, ``d_h``
  of them from stratum ``h`` (``s_h`` sampled, ``q_h`` relevant among those):
  ``prec_k = 1/k + (d/k) sum_h (d_h/d) (q_h + 1e-5) / (s_h + 3e-5)``. ``SAP_c`` sums them per stratum.
* ``infAP = sum_h (r_h N_h / n_h) / R * SAP_h / r_h`` (strata with ``n_h = 0`` or ``r_h = 0`` add nothing).
* ``infNDCG = d * sum_h (d_h/d) G_h / s_h / IDCG`` with ``G_h`` the run's ``grade / log2(k + 1)`` summed
  over the relevant documents of stratum ``h``, ``d``, ``d_h``, ``s_h`` counted over the whole ranking, and
  ``IDCG`` the ideal DCG of ``round(R_g)`` documents of each grade, best grade first (at most 1,000 ranks).
* ``inum_rel_ret`` at rank ``k``: ``sum_h d_h (q_h + 1e-5) / (s_h + 3e-5)``; ``iP@k`` = that / ``k``
  (after the last document: its value / ``k``); ``iprec@rec`` the 11-point interpolated precision of those
  estimates, walked from the bottom of the ranking as the script walks it (at most one recall level is
  passed per rank).

Means are over the topics in both files; ``inum_rel`` sums every qrels topic, ``num_ret`` every ranked
document (at most 1,000 per topic). Beyond the script: ``confidence_intervals`` gives a 95% Student-t
interval of each mean over the topics (the topics as a sample of topics; not the sampling variance of a
topic's own estimate). Differences: grades are sorted as numbers (the script sorts them as strings, which
only differs from grade 10 up), the run's topic ids are compared as written (the script strips leading
zeros from the run's), and a document listed twice for a topic is an error (the script keeps the last).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from workbench.formats.ids import sorted_topics

MAX_RESULTS = 1000
PRECISION_RANKS = (10, 50, MAX_RESULTS)
RECALL_LEVELS = [i / 10 for i in range(11)]
ALL_MEASURES = ("infAP", "infNDCG", *(f"iP{k}" for k in PRECISION_RANKS), "inum_rel_ret", "inum_rel", "num_ret")


@dataclass
class SampledTopic:
    """One topic's sampled population: each document's stratum and grade, and the per-stratum counts."""

    stratum: dict[str, str] = field(default_factory=dict)
    grade: dict[str, int] = field(default_factory=dict)
    docs: dict[str, int] = field(default_factory=dict)          # N_h
    sampled: dict[str, int] = field(default_factory=dict)       # n_h
    relevant: dict[str, int] = field(default_factory=dict)      # r_h
    by_grade: dict[str, dict[int, int]] = field(default_factory=dict)  # r_hg

    def add(self, docno: str, stratum: str, grade: int) -> None:
        self.stratum[docno], self.grade[docno] = stratum, grade
        self.docs[stratum] = self.docs.get(stratum, 0) + 1
        self.sampled.setdefault(stratum, 0)
        self.relevant.setdefault(stratum, 0)
        if grade >= 0:
            self.sampled[stratum] += 1
        if grade > 0:
            self.relevant[stratum] += 1
            grades = self.by_grade.setdefault(stratum, {})
            grades[grade] = grades.get(grade, 0) + 1

    def num_rel(self) -> float:
        return sum(self.relevant[h] * self.docs[h] / self.sampled[h] for h in sorted(self.docs) if self.sampled[h])

    def ideal_dcg(self) -> float:
        """DCG of ``round(R_g)`` documents of each grade, best first, as the script builds it."""
        per_grade: dict[int, float] = {}
        for h in sorted(self.by_grade):
            for g, count in self.by_grade[h].items():
                per_grade[g] = per_grade.get(g, 0.0) + count * self.docs[h] / self.sampled[h]
        total, start = 0.0, 0
        for g in sorted(per_grade, reverse=True):
            count = int(per_grade[g] + 0.5)
            for r in range(start + 1, start + count + 1):
                total += g / (math.log(r + 1) / math.log(2))
                if r >= MAX_RESULTS:
                    break
            start += count
        return total


def parse_sampled_qrels(lines: Iterable[str], *, name: str = "qrels") -> dict[str, SampledTopic]:
    """``topic iter docno stratum grade`` lines; raise ``ValueError("name:LINE: what")`` on a bad one."""
    topics: dict[str, SampledTopic] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 5:
            raise ValueError(f"{name}:{number}: expected 5 columns (topic iter docno stratum grade), found "
                             f"{len(fields)}")
        topic, _, docno, stratum, grade = fields
        try:
            value = int(grade)
        except ValueError:
            raise ValueError(f"{name}:{number}: grade {grade!r} is not an integer") from None
        entry = topics.setdefault(topic, SampledTopic())
        if docno in entry.grade:
            raise ValueError(f"{name}:{number}: document {docno!r} is listed twice for topic {topic!r}")
        entry.add(docno, stratum, max(value, -1))
    if not topics:
        raise ValueError(f"{name}:1: the file is empty: no judgments")
    return topics


def _estimate(docs: dict, relevant: dict, sampled: dict) -> float:
    return sum(docs[h] * (relevant[h] + 0.00001) / (sampled[h] + 0.00003) for h in sorted(docs))


@dataclass
class _Walk:
    """The counters of one ranking walked top down (per stratum ``h``: ``d_h`` seen, ``s_h`` sampled among
    them, ``q_h`` relevant among those, ``SAP_h``, ``G_h``), and the estimated relevant retrieved per rank."""

    seen: dict
    judged: dict
    found: dict
    sap: dict
    gain: dict
    depth: int = 0
    curve: list = field(default_factory=list)

    def precision_above(self, strata) -> float:
        if not self.depth:
            return 0.0
        return sum((self.seen[h] / self.depth) * (self.found[h] + 0.00001) / (self.judged[h] + 0.00003)
                   for h in strata if self.seen[h])


def _walk(topic: SampledTopic, ranked: Iterable[tuple[int, str]]) -> _Walk:
    """Walk ``(rank, docno)`` pairs, best first: every ranked document, or only those of the population
    (the others change no counter; ``curve`` then has a value per population document only)."""
    strata = sorted(topic.docs)
    w = _Walk(*(dict.fromkeys(strata, 0) for _ in range(3)), *(dict.fromkeys(strata, 0.0) for _ in range(2)))
    for rank, docno in ranked:
        if rank > MAX_RESULTS:
            break
        grade = topic.grade.get(docno, -1)
        stratum = topic.stratum.get(docno)
        if grade > 0:
            w.sap[stratum] += 1 / rank + (w.depth / rank) * w.precision_above(strata)
            w.found[stratum] += 1
            w.gain[stratum] += grade / (math.log(rank + 1) / math.log(2))
        if stratum is not None:
            w.depth += 1
            w.seen[stratum] += 1
            w.judged[stratum] += grade >= 0
        w.curve.append(_estimate(w.seen, w.found, w.judged))
    return w


def inferred(topic: SampledTopic, ranked: Iterable[tuple[int, str]], walk: _Walk | None = None) -> dict:
    """infAP, infNDCG and the estimated relevant retrieved of one ranking, given as ``(rank, docno)`` pairs
    (the population's documents are enough)."""
    strata = sorted(topic.docs)
    w = walk or _walk(topic, ranked)
    num_rel = topic.num_rel()
    ap = sum((topic.relevant[h] * topic.docs[h] / topic.sampled[h]) / num_rel * w.sap[h] / topic.relevant[h]
             for h in strata if topic.sampled[h] and num_rel and topic.relevant[h])
    dcg = sum((w.seen[h] / w.depth) * w.gain[h] / w.judged[h] for h in strata if w.depth and w.judged[h])
    ideal = topic.ideal_dcg()
    return {"infAP": ap, "infNDCG": w.depth * dcg / ideal if ideal else 0.0,
            "inum_rel_ret": w.curve[-1] if w.curve else 0.0}


def topic_measures(topic: SampledTopic, ranking: list[str]) -> dict:
    """The script's per-topic values for one ranking (docnos, best first; the first 1,000 count)."""
    w = _walk(topic, enumerate(ranking, 1))
    out = inferred(topic, (), w)
    rel_ret, num_rel = out["inum_rel_ret"], topic.num_rel()
    out |= {f"iP{k}": (w.curve[k - 1] if k <= len(w.curve) else rel_ret) / k for k in PRECISION_RANKS}
    out |= {"inum_rel": num_rel, "num_ret": len(ranking),
            "iprec": _interpolated(w.curve, num_rel, rel_ret)}
    return out


def _interpolated(curve: list[float], num_rel: float, rel_ret: float) -> list[float]:
    """The script's 11-point interpolated precision of the estimated curve (walked from the last rank up)."""
    cuts = [level * num_rel for level in RECALL_LEVELS]
    points = [0.0] * len(cuts)
    current = len(cuts) - 1
    while current >= 0 and cuts[current] > rel_ret:
        current -= 1
    best = 0.0
    for rank in range(len(curve), 0, -1):
        best = max(best, curve[rank - 1] / rank)
        if current >= 0 and cuts[current] > curve[rank - 1]:
            points[current] += best
            current -= 1
    while current >= 0:
        points[current] += best
        current -= 1
    return points


def evaluate(qrels: dict[str, SampledTopic], rankings: dict[str, list[str]]) -> dict:
    """``{"topics": {qid: values}, "all": means and sums}`` over the topics in both (as the script)."""
    topics = sorted_topics(t for t in rankings if t in qrels)
    per_topic = {t: topic_measures(qrels[t], rankings[t]) for t in topics}
    n = len(per_topic)
    summary: dict = {}
    if n:
        for name in ("infAP", "infNDCG", *(f"iP{k}" for k in PRECISION_RANKS)):
            summary[name] = sum(v[name] for v in per_topic.values()) / n
        summary["iprec"] = [sum(v["iprec"][i] for v in per_topic.values()) / n for i in range(len(RECALL_LEVELS))]
        summary["inum_rel_ret"] = sum(v["inum_rel_ret"] for v in per_topic.values())
        summary["num_ret"] = sum(min(v["num_ret"], MAX_RESULTS) for v in per_topic.values())
    summary["inum_rel"] = sum(topic.num_rel() for topic in qrels.values())
    return {"topics": per_topic, "all": summary}


def confidence_intervals(per_topic: dict[str, dict], names=("infAP", "infNDCG"), level: float = 0.95) -> dict:
    """A Student-t interval of each mean over the topics: ``{name: (low, high)}`` (None with < 2 topics)."""
    from scipy import stats

    out = {}
    for name in names:
        values = [v[name] for v in per_topic.values()]
        if len(values) < 2:
            out[name] = None
            continue
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (len(values) - 1))
        half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * sd / math.sqrt(len(values))
        out[name] = (mean - half, mean + half)
    return out


def report_lines(result: dict, *, per_topic: bool = False, intervals: dict | None = None) -> list[str]:
    """The script's output lines (per topic first with ``per_topic``), then the intervals if asked."""
    lines = []
    for qid, v in result["topics"].items() if per_topic else ():
        lines += [f"infAP\t\t{qid}\t\t{v['infAP']:6.4f}", f"infNDCG\t\t{qid}\t\t{v['infNDCG']:6.4f}"]
        lines += [f"iP{k}\t\t{qid}\t\t{v[f'iP{k}']:6.4f}" for k in PRECISION_RANKS]
        lines += [f"inum_rel_ret\t{qid}\t{v['inum_rel_ret']:14.4f}", f"inum_rel\t{qid}\t{v['inum_rel']:14.4f}",
                  f"num_ret\t\t{qid}\t{v['num_ret']:9d}"]
    s = result["all"]
    lines += [f"infAP\t\tall\t\t{s['infAP']:6.4f}", f"infNDCG\t\tall\t\t{s['infNDCG']:6.4f}"]
    lines += [f"iprec@rec{RECALL_LEVELS[i]:4.2f}\tall\t\t{p:6.4f}" for i, p in enumerate(s["iprec"])]
    lines += [f"iP{k}\t\tall\t\t{s[f'iP{k}']:6.4f}" for k in PRECISION_RANKS]
    lines += [f"inum_rel_ret\tall\t{s['inum_rel_ret']:14.4f}", f"inum_rel\tall\t{s['inum_rel']:14.4f}",
              f"num_ret\t\tall\t{s['num_ret']:9d}"]
    for name, bounds in (intervals or {}).items():
        if bounds is not None:
            lines += [f"{name}_ci95_low\tall\t\t{bounds[0]:6.4f}", f"{name}_ci95_high\tall\t\t{bounds[1]:6.4f}"]
    return lines
