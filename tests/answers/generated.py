"""Generated answer tracks for tests and benchmarks: answer runs, nugget banks and nuggetizer assignments as
the files a track receives (JSON lines), from a seed."""

from __future__ import annotations

import json
import random
from pathlib import Path


def answer_line(run: str, qid: str, sentences: list[tuple[str, list[int]]], references: list[str],
                team: str = "team") -> str:
    """One answer in the AutoJudge / RAGTIME shape (citations as indices into references)."""
    return json.dumps({"metadata": {"team_id": team, "run_id": run, "topic_id": qid, "type": "automatic"},
                       "responses": [{"text": text, "citations": cites} for text, cites in sentences],
                       "references": references})


def write_track(directory: Path, *, runs: int, qids: list[str], nuggets: int, seed: int = 7,
                sentences: int = 4) -> dict:
    """Answer files (one per run), a bank file and an assignment file; returns their paths and the records of the
    assignment file (nuggetizer's assign output). Some banks have no vital nugget; some answers support nothing."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    banks, records, answer_files = [], [], []
    for k, qid in enumerate(qids):
        size = max(1, nuggets - rng.choice([0, 0, nuggets // 2])) if k % 9 else nuggets
        vital_share = 0.0 if k % 5 == 4 else rng.choice([0.3, 0.5, 1.0])
        banks.append({"qid": qid, "query": f"question {qid}", "nuggets": [
            {"text": f"fact {n} of topic {qid}", "importance": "vital" if rng.random() < vital_share else "okay"}
            for n in range(size)]})
    for r in range(runs):
        tag = f"run{r:03d}"
        lines = []
        for k, qid in enumerate(qids):
            refs = [f"seg-{qid}-{rng.randrange(40)}" for _ in range(3)]
            refs = list(dict.fromkeys(refs))
            body = [(f"Sentence {s} of {tag} on {qid}.", [rng.randrange(len(refs))] if s % 3 else [])
                    for s in range(sentences)]
            lines.append(answer_line(tag, qid, body, refs, team=f"team{r % 7}"))
            nothing = (r + k) % 11 == 0
            records.append({"qid": qid, "run_id": tag, "nuggets": [
                {**n, "assignment": "not_support" if nothing else rng.choice(["support", "partial_support",
                                                                              "not_support"])}
                for n in banks[k]["nuggets"]]})
        path = directory / f"{tag}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        answer_files.append(path)
    bank_file = directory / "nuggets.jsonl"
    bank_file.write_text("".join(json.dumps(b) + "\n" for b in banks))
    assign_file = directory / "assignments.jsonl"
    assign_file.write_text("".join(json.dumps(r) + "\n" for r in records))
    return {"answers": answer_files, "banks": bank_file, "assignments": assign_file, "records": records}
