"""Cross-check of ``cal`` against HiCAL's own engine (hical 0.3.0, the BMI engine TREC used) on Vaswani.

Usage (needs ../shared/peer-tests/vaswani_npl; several minutes on one core):

    python tests/benchmarks/check_peer_cal.py [--budget 100]

Both are seeded with the same topic text (title; Vaswani topics have no description) and judged by
the same simulated assessor (the qrels), one document per keypress, ``--budget`` judgments per topic.
HiCAL: corpus built by hical's own builder with its defaults (lowercase, English stop words, Porter stems,
min df 2), the seed text put through the same preprocessor, retraining after every judgment (its
default ``retrain_every_n_judgments = 1``), sofia-ml logistic regression as BMI. The workbench: cal with its
defaults (hashed log-tf idf of Snowball stems and the topic text's BM25 as one more feature, scikit-learn
logistic regression, batches growing by 10%), and with ``anchor=none`` (BMI's classifier alone, as HiCAL).
Prints relevant documents found and mean recall of each.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
VASWANI = next((p / "shared" / "peer-tests" / "vaswani_npl" for p in ROOT.parents
                if (p / "shared" / "peer-tests" / "vaswani_npl").is_dir()), ROOT.parent / "shared")


def load():
    from pooling.strategies.simulate import relevant_sets
    from workbench.formats.documents import iter_documents
    from workbench.formats.qrels import read_qrels
    from workbench.formats.topics import read_topics

    docs = [(d.docno, f"{d.title} {d.text}") for d in iter_documents(VASWANI / "doc-text.trec")]
    topics = {t.qid: f"{t.title} {t.description}".strip() for t in read_topics(VASWANI / "query-text.trec")}
    relevant = relevant_sets(read_qrels(VASWANI / "qrels"))
    return docs, {q: t for q, t in topics.items() if relevant.get(q)}, relevant


def hical_run(docs, topics, relevant, budget: int, work: Path) -> dict:
    import hical
    from hical.config.schema import CorpusConfig, InputConfig, OutputConfig, PreprocessingConfig
    from hical.preprocessing.text_preprocessor import TextPreprocessor

    with open(work / "docs.jsonl", "w") as out:
        for docno, text in docs:
            out.write(json.dumps({"id": docno, "text": text}) + "\n")
    config = CorpusConfig(input=InputConfig(format="jsonl", path=str(work / "docs.jsonl"), doc_id_field="id",
                                            text_fields=["text"]),
                          preprocessing=PreprocessingConfig(), output=OutputConfig(path=str(work / "features")))
    dataset = hical.open_dataset(hical.build_corpus(config).document_features_path)
    preprocess = TextPreprocessor.from_config(PreprocessingConfig())
    found = {}
    for qid, text in topics.items():
        session = hical.Session.start_for_dataset(dataset, relevant_seeds=preprocess.process_to_string(text),
                                                  review_batch_size=1, config=hical.SessionConfig(num_threads=1))
        found[qid] = 0
        for _ in range(budget):
            items = session.get_doc_to_judge(1)
            if not items:
                break
            hit = items[0].doc_id in relevant[qid]
            found[qid] += hit
            session.judge(items[0], 1 if hit else -1)
    return found


def cal_run(docs, topics, relevant, budget: int, anchor: str = "bm25") -> dict:
    from pooling.strategies.cal import CalParams, CalPool
    from pooling.strategies.features import build_features
    from pooling.strategies.simulate import simulate

    features = build_features([d for d, _ in docs], [t for _, t in docs])
    result = simulate(CalPool(features, topics, CalParams(budget=budget, anchor=anchor)), relevant, list(topics))
    return {q: t["found"] for q, t in result["topics"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=100)
    args = parser.parse_args()
    docs, topics, relevant = load()
    print(f"Vaswani: {len(docs)} documents, {len(topics)} topics with relevant documents, budget {args.budget}")
    print("| engine | relevant found | mean recall | seconds |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, run in [("workbench cal", lambda: cal_run(docs, topics, relevant, args.budget)),
                          ("workbench cal, anchor=none", lambda: cal_run(docs, topics, relevant, args.budget, "none")),
                          ("HiCAL (hical 0.3.0)", lambda: hical_run(docs, topics, relevant, args.budget, Path(tmp)))]:
            clock = time.perf_counter()
            found = run()
            recall = sum(found[q] / len(relevant[q]) for q in topics) / len(topics)
            print(f"| {name} | {sum(found.values())} | {recall:.3f} | {time.perf_counter() - clock:.0f} |", flush=True)


if __name__ == "__main__":
    main()
