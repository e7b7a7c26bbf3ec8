import argparse
import json
import os
import tempfile
from pathlib import Path

from judging.machine.hybrid_simulation import simulate
from judging.machine_hybrid import HybridRefused, simulation_pairs
from judging.queueing import AUDIT_SHARE
from workbench.formats.qrels import read_qrels, write_qrels
from workbench.management.base import Error, WorkbenchCommand


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give the share of pairs a human grades, between 0 and 1 (e.g. 0.2)")
    return value


def _write(frame, output: str) -> None:
    """The qrels written whole or not at all (a temporary file beside the output, renamed over it)."""
    folder = Path(output).resolve().parent
    if not folder.is_dir():
        raise Error(f"--output {output}: no folder {folder}")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".simulate_hybrid.")
    try:
        with os.fdopen(handle, "wb") as out:
            write_qrels(frame, out)
        os.replace(temporary, output)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise Error(f"--output {output}: {exc.strerror or exc}") from None


class Command(WorkbenchCommand):
    help = ("Replay hybrid judging with a file of human qrels as the assessor: the router asks for a human grade "
            "(a --budget share of the judge's pairs, least sure first, an audit share at random) and reads only "
            "those; the other pairs get the machine label calibrated per topic. Writes the hybrid qrels to "
            "--output and prints asked, budget and Cohen's kappa (binary and graded) against the full human "
            "qrels, beside the raw machine labels and random routing with the same budget.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judge", required=True, help="The machine judge whose labels are routed")
        parser.add_argument("--human", required=True, help="The full human qrels (TREC format)")
        parser.add_argument("--budget", required=True, type=_budget, help="Share of the pairs a human grades (0-1)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--output", required=True, help="Where the hybrid qrels are written (TREC format)")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        human = read_qrels(opts["human"])
        try:
            pairs, left_out = simulation_pairs(collection, opts["judge"], human)
        except HybridRefused as exc:
            raise Error(str(exc)) from None
        result = simulate(pairs["qid"], pairs["margin"], pairs["machine"], pairs["human"], budget=opts["budget"],
                          grades=collection.grades, relevant_from=collection.relevant_from, seed=opts["seed"],
                          audit_share=AUDIT_SHARE)
        _write(pairs[["qid", "docno"]].assign(rel=result.pop("labels")), opts["output"])
        result.pop("asked_mask")
        summary = {"collection": collection.slug, "judge": opts["judge"], "output": opts["output"], **result,
                   **left_out, "relevant_from": collection.relevant_from}
        if opts["format"] == "json":
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(f"asked {summary['asked']} of {summary['pairs']} pairs (budget {summary['budget']:.0%}, "
                          f"audit share {summary['audit_share']:.0%}); hybrid qrels written to {opts['output']}")
        for side in ("hybrid", "random", "machine"):
            k = summary[side]
            self.stdout.write(f"{side:8s} kappa binary {_shown(k['kappa_binary'])}  graded {_shown(k['kappa_graded'])}")


def _shown(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"
