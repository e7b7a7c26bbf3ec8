"""Vaswani: continuous active learning (``cal``) against BM25 judged top down, depth-k, MTF and MaxMean.

Usage (needs ../shared/peer-tests/vaswani_npl; takes a few minutes on one core):

    python tests/benchmarks/simulate_cal.py [--budgets 100 300] [--keep DIR]

Builds a scratch workbench (SQLite under a temporary WORKBENCH_VAR_DIR) with the Vaswani documents,
topics and three runs written here with bm25s 0.3.16 (top 1000 per topic, title text as the query):

* ``bm25``: BM25 (k1 = 1.5, b = 0.75, bm25s' "lucene" variant), English stop words, Snowball stemmer;
* ``bm25-nostem``: the same without stemming;
* ``tfidf``: cosine over scikit-learn tf-idf vectors (no stemming).

Then runs ``manage.py simulate_pool vaswani --strategy S --qrels qrels --budget B --format json`` for
cal (with its default BM25 anchor and with ``--cal anchor=none``), depth (the depth-1000 pool of the three runs in pool-rank order), mtf and maxmean (candidates to
depth 1000, so that every strategy can spend the budget), and a one-run depth simulation per BM25 run
(= that ranking judged top down), then the stopping rules on cal (budget --stop-budget); prints
the tables of the README.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VASWANI = next((p / "shared" / "peer-tests" / "vaswani_npl" for p in ROOT.parents
                if (p / "shared" / "peer-tests" / "vaswani_npl").is_dir()), ROOT.parent / "shared")


def write_runs(directory: Path) -> dict[str, Path]:
    import bm25s
    import numpy as np
    import Stemmer
    from sklearn.feature_extraction.text import TfidfVectorizer

    sys.path.insert(0, str(ROOT))
    from workbench.formats.documents import iter_documents
    from workbench.formats.topics import read_topics

    docs = list(iter_documents(VASWANI / "doc-text.trec"))
    texts = [f"{d.title} {d.text}" for d in docs]
    docnos = np.array([d.docno for d in docs])
    topics = read_topics(VASWANI / "query-text.trec")
    queries = [f"{t.title} {t.description}".strip() for t in topics]
    paths = {}

    def write(tag, scores_of):
        path = directory / f"{tag}.run"
        with open(path, "w") as out:
            for topic, (ids, scores) in zip(topics, scores_of, strict=True):
                for rank, (i, s) in enumerate(zip(ids, scores, strict=True), start=1):
                    if s > 0:
                        out.write(f"{topic.qid} Q0 {docnos[i]} {rank} {s:.6f} {tag}\n")
        paths[tag] = path

    for tag, stemmer in [("bm25", Stemmer.Stemmer("english")), ("bm25-nostem", None)]:
        index = bm25s.BM25()
        index.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
        ids, scores = index.retrieve(bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False),
                                     k=1000, show_progress=False)
        write(tag, zip(ids, scores, strict=True))
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    matrix = vec.fit_transform(texts)
    sims = (vec.transform(queries) @ matrix.T).toarray()
    top = np.argsort(-sims, axis=1, kind="stable")[:, :1000]
    write("tfidf", ((row, sims[i, row]) for i, row in enumerate(top)))
    return paths


def manage(env, *args) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def setup(var: Path) -> dict:
    env = {**os.environ, "WORKBENCH_VAR_DIR": str(var), "DATABASE_URL": f"sqlite:///{var / 'sim.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    manage(env, "migrate", "-v", "0")
    manage(env, "create_collection", "vaswani", "--name", "Vaswani (NPL)")
    manage(env, "import_documents", "vaswani", str(VASWANI / "doc-text.trec"))
    manage(env, "import_topics", "vaswani", str(VASWANI / "query-text.trec"))
    for path in write_runs(var).values():
        manage(env, "import_runs", "vaswani", str(path))
    return env


def simulate(env, strategy: str, budget: int, *extra: str) -> dict:
    return json.loads(manage(env, "simulate_pool", "vaswani", "--strategy", strategy, "--qrels",
                             str(VASWANI / "qrels"), "--budget", str(budget), "--format", "json", *extra))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--stop-budget", type=int, default=1000)
    parser.add_argument("--rules", nargs="*", default=["knee", "target", "qbcb"])
    parser.add_argument("--keep", type=Path, default=None, help="keep the scratch workbench in this directory")
    args = parser.parse_args()
    if not VASWANI.is_dir():
        raise SystemExit(f"{VASWANI} not found")
    with tempfile.TemporaryDirectory() as tmp:
        var = args.keep or Path(tmp)
        var.mkdir(parents=True, exist_ok=True)
        env = setup(var) if not (var / "sim.sqlite3").exists() else {
            **os.environ, "WORKBENCH_VAR_DIR": str(var), "DATABASE_URL": f"sqlite:///{var / 'sim.sqlite3'}"}
        print("| judgments/topic | strategy | mean recall | relevant found | vs BM25 top-down |")
        print("|---:|---|---:|---:|---:|")
        for budget in args.budgets:
            rows = {}
            deep = ("--depth", "1000")  # every run-based strategy can spend the budget (the runs have 1000)
            for tag in ("bm25", "bm25-nostem"):
                rows[f"{tag} top-down"] = simulate(env, "depth", budget, "--runs", tag, *deep)
            rows["depth (3 runs, pool-rank order)"] = simulate(env, "depth", budget, *deep)
            for strategy in ("mtf", "maxmean"):
                rows[strategy] = simulate(env, strategy, budget, *deep)
            rows["cal"] = simulate(env, "cal", budget)
            rows["cal without the BM25 anchor (anchor=none: BMI's classifier alone)"] = simulate(
                env, "cal", budget, "--cal", "anchor=none")
            rows["cal, bm25's top 10 judged first"] = simulate(env, "cal", budget, "--runs", "bm25",
                                                                "--seed-depth", "10")
            base = rows["bm25 top-down"]["found"]
            for name, result in rows.items():
                print(f"| {budget} | {name} | {result['mean_recall']:.3f} | {result['found']} | "
                      f"{result['found'] / base - 1:+.1%} |")
        print()
        print("| rule | target | topics stopped | reached target | mean recall when stopped | judgments when stopped "
              "| side judgments per topic |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for rule in args.rules:
            result = simulate(env, "cal", args.stop_budget, "--stop", rule, "--target-recall", "0.8")
            s = result["stopping"]
            side = sum(t.get("side_judgments", 0) for t in result["topics"].values()) / len(result["topics"])
            print(f"| {rule} | {s['target_recall'] or '-'} | {s['stopped']} of {s['topics']} | "
                  f"{s['reached_target'] if s['target_recall'] else '-'} | {s['mean_recall_when_stopped'] or '-'} | "
                  f"{s['mean_judgments_when_stopped'] or '-'} | {side:.0f} |")


if __name__ == "__main__":
    main()
