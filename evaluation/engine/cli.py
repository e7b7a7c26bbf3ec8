"""``trec_eval`` on the command line: same options, measure syntax, output and exit codes as 9.0.8.

``main(["-q", "-m", "all_trec", "qrels", "run"], stdout, stderr) -> exit code``. Django-free; the
management command ``manage.py trec_eval`` only forwards its arguments here.

Options (getopt style, as trec_eval: ``-mP.5``, ``-m P.5``, ``-l2``, ``-M 100``, long forms too):
``-q`` per-topic lines, ``-m measure[.params]`` (repeatable; default ``official``), ``-c`` average over
every qrels topic, ``-l n`` relevance level, ``-n`` no summary lines, ``-J`` judged documents only,
``-M n`` depth, ``-N n`` collection size (utility), ``-R qrels`` / ``-T trec_results`` (the only formats),
``-D n`` (accepted, ignored), ``-v`` version, ``-h`` help. ``-`` as the run file reads standard input.

Output lines are ``%-22s\\t%s\\t%6.4f`` (integers ``%ld``, relstring quoted, runid as is): per topic first
(with ``-q``), then the ``all`` lines. Exit codes: 0 fine; 1 usage or unknown measure; 2 unreadable or
malformed input (one line ``trec_eval: path:LINE: problem``) or bad measure parameters; 4 inconsistent
input found while evaluating; 7 no topic in both files.

Small, clean files (most command-line uses) are read and ranked by :mod:`evaluation.engine.small_files`
without importing pyarrow, which takes longer to import than they take to evaluate; the output is the same.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import TextIO

from evaluation.engine.aggregates import AGGREGATES, aggregate, printed_name

VERSION = "9.0.8 (workbench vectorised engine)"
USAGE = """Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file [trec_top_file ...]
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_trec' prints all trec measures, '-m official' is default;
       ir_measures' names are understood too: nDCG@10, P@5, AP, R@1000, RR@10, Judged@10)
"""
HELP = USAGE + """   -c: average over all topics of the qrels (missing topics score 0)
   -l<num>: minimum grade that is relevant (default 1)
   -n: no summary ('all') lines
   -J: evaluate judged documents only (unjudged removed from every ranking)
   -M<num>: evaluate only the first num documents of each topic
   -N<num>: number of documents in the collection (utility)
   --aggregate mean|gmean|hmean|median: the 'all' lines of per-topic measures aggregated another way
   (printed gm_NAME, hm_NAME, median_NAME; workbench extension)
   --fractional-grades: grades with decimals (0.6, a judge's probability) keep their exact values in the
   gain-based measures (ndcg, ndcg_cut, dcg, cg, ncg, err, rbp_graded, ...); a grade >= -l (which may
   have decimals, e.g. -l 0.5) is relevant for the others. Without it grades are read as trec_eval reads
   them (0.6 as 0) and a warning says so (workbench extension)
   Measures: trec_eval 9.0.8's 'all_trec' set and the workbench's 'all_ext' set (judged, rbp, rbp_resid,
   rbp_graded, ndcg_exp, ndcg_exp_cut, set_Fbeta, the condensed-list measures, and the textbook forms
   dcg, dcg_cut, ideal_dcg, ideal_dcg_cut, dcg_exp, dcg_exp_cut, dcg_jk_cut, ndcg_jk_cut, cg_cut, ncg_cut,
   fallout_cut, roc_auc, and rr_cut, err_cut, nerr_cut, err_gdeval_cut, f_cut, f_minkr_cut, ap_minkr_cut,
   judged_min);
   see evaluation/engine/spec.py.
"""

_SHORT_ARG = set("mlDNMRTZA")
_SHORT_FLAG = set("hvqcnJoF")
_LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m",
         "complete_rel_info_wanted": "c", "level_for_rel": "l", "nosummary": "n", "Debug_level": "D",
         "Judged_docs_only": "J", "Number_docs_in_coll": "N", "Max_retrieved_per_topic": "M",
         "Rel_info_format": "R", "Results_format": "T", "Output_old_results_format": "o", "Zscore": "Z",
         "aggregate": "A", "fractional-grades": "F"}


class UsageError(Exception):
    pass


@dataclass
class Options:
    query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int = 1
    max_depth: int | None = None
    coll_size: int = 0
    measures: list[str] = field(default_factory=list)
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    help: bool = False
    version: bool = False
    files: list[str] = field(default_factory=list)
    aggregate: str = "mean"
    fractional: bool = False
    level_text: str | None = None


def _atol(text: str) -> int:
    from evaluation.engine.spec import _strtol

    return _strtol(text)


#: what each option does to the options record (value: the option's argument, None for a flag)
_APPLY = {
    "h": lambda o, v: setattr(o, "help", True),
    "v": lambda o, v: setattr(o, "version", True),
    "q": lambda o, v: setattr(o, "query", True),
    "m": lambda o, v: o.measures.append(v),
    "c": lambda o, v: setattr(o, "complete", True),
    "l": lambda o, v: (setattr(o, "level", _atol(v)), setattr(o, "level_text", v)),
    "n": lambda o, v: setattr(o, "summary", False),
    "J": lambda o, v: setattr(o, "judged_only", True),
    "N": lambda o, v: setattr(o, "coll_size", _atol(v)),
    "M": lambda o, v: setattr(o, "max_depth", _atol(v)),
    "R": lambda o, v: setattr(o, "rel_format", v),
    "T": lambda o, v: setattr(o, "results_format", v),
    "Z": lambda o, v: setattr(o, "zscores", v),
    "D": lambda o, v: None,  # debug level: accepted, as trec_eval does, and ignored
    "o": lambda o, v: None,  # old output format: accepted and ignored
    "A": lambda o, v: setattr(o, "aggregate", v),
    "F": lambda o, v: setattr(o, "fractional", True),
}


def _long_option(arg: str, argv: list[str], i: int) -> tuple[tuple[str, str | None], int]:
    """``--name[=value]`` as (short letter, value), and the index of the next argument."""
    name, eq, value = arg[2:].partition("=")
    if name not in _LONG:
        raise UsageError(f"unrecognized option '{arg}'")
    short = _LONG[name]
    if short not in _SHORT_ARG:
        return (short, None), i
    if not eq:
        if i >= len(argv):
            raise UsageError(f"option '{arg}' requires an argument")
        value, i = argv[i], i + 1
    return (short, value), i


def _short_options(arg: str, argv: list[str], i: int) -> tuple[list[tuple[str, str | None]], int]:
    """``-qc``, ``-m map``, ``-mmap``: the (letter, value) pairs, and the index of the next argument."""
    pairs: list[tuple[str, str | None]] = []
    for j in range(1, len(arg)):
        c = arg[j]
        if c in _SHORT_FLAG:
            pairs.append((c, None))
            continue
        if c not in _SHORT_ARG:
            raise UsageError(f"invalid option -- '{c}'")
        value = arg[j + 1:]
        if not value:
            if i >= len(argv):
                raise UsageError(f"option requires an argument -- '{c}'")
            value, i = argv[i], i + 1
        pairs.append((c, value))
        break
    return pairs, i


def parse_args(argv: list[str]) -> Options:
    """getopt_long-like parsing (options may follow the file names; ``--`` ends options)."""
    opts = Options()
    pairs: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            opts.files.extend(argv[i:])
            break
        if arg.startswith("--"):
            pair, i = _long_option(arg, argv, i)
            pairs.append(pair)
        elif arg.startswith("-") and arg != "-":
            more, i = _short_options(arg, argv, i)
            pairs.extend(more)
        else:
            opts.files.append(arg)
    for c, value in pairs:
        _APPLY[c](opts, value)
    return opts


def format_value(value, kind: str) -> str:
    """A value as trec_eval prints it: ``%6.4f`` (C spelling of nan/inf), ``%ld``, quoted relstring."""
    if kind == "long":
        return str(int(value))
    if kind == "string":
        return f"'{value}'"
    value = float(value)
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{text:>6}"
    return f"{value:6.4f}"


def result_lines(result, query: bool, summary: bool, how: str = "mean", n_topics: int = 0) -> list[str]:
    """trec_eval's output lines for one :class:`EvalResult`; with ``how`` other than the mean, the
    per-topic measures' ``all`` lines aggregate ``n_topics`` topics that way (see ``aggregates``)."""
    lines = []
    if query:
        columns = [(name, m.spec.value, result.values[name].tolist())
                   for m in result.measures if m.spec.per_topic for name in m.names]
        for i, qid in enumerate(result.qids):
            for name, kind, values in columns:
                lines.append(f"{name:<22}\t{qid}\t{format_value(values[i], kind)}\n")
    if summary:
        for m in result.measures:
            for name in m.names:
                if name not in result.aggregate:
                    continue
                value = result.aggregate[name]
                shown = name
                if how != "mean" and m.spec.summary == "mean":
                    value = aggregate(result.values[name], how, n_topics or len(result.qids))
                    shown = printed_name(name, how)
                text = value if m.spec.summary == "runid" else format_value(value, m.spec.value)
                lines.append(f"{shown:<22}\tall\t{text}\n")
    return lines


def main(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run trec_eval with ``argv`` (without the program name); return the exit code."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        opts = parse_args(list(argv))
    except UsageError as exc:
        stderr.write(f"trec_eval: {exc}\n{USAGE}")
        return 1
    if opts.version:
        stderr.write(f"trec_eval version {VERSION}\n")
        return 0
    if opts.help:
        stdout.write(HELP)
        return 0
    if len(opts.files) < 2:
        stderr.write(USAGE)
        return 1
    if opts.zscores is not None:
        stderr.write("trec_eval: -Z (z-scores) is not supported by this engine\n")
        return 1
    if opts.aggregate not in AGGREGATES:
        stderr.write(f"trec_eval: --aggregate {opts.aggregate!r}: one of {', '.join(AGGREGATES)}\n")
        return 1
    if opts.rel_format != "qrels":
        stderr.write(f"trec_eval: Illegal rel_format '{opts.rel_format}' (only 'qrels' is supported)\n")
        return 2
    if opts.results_format != "trec_results":
        stderr.write(f"trec_eval: Illegal retrieval results format '{opts.results_format}'\n")
        return 2
    return _evaluate(opts, stdout, stderr)


def _fractional_level(opts: Options) -> float | None:
    """``-l`` as a number with decimals (for ``--fractional-grades``); 1 when not given, None if not a number."""
    if opts.level_text is None:
        return 1.0
    try:
        level = float(opts.level_text)
    except ValueError:
        return None
    return level if math.isfinite(level) and level > 0 else None


def _evaluate(opts: Options, stdout: TextIO, stderr: TextIO) -> int:
    from evaluation.engine.spec import MeasureError, parse_measures

    try:
        parse_measures(opts.measures or None)
    except MeasureError as exc:
        stderr.write(f"trec_eval: {exc}\n")
        return exc.exit_code
    from evaluation.engine import small_files

    qrels_path, run_paths = opts.files[0], opts.files[1:]
    relevant_from = _fractional_level(opts)
    if opts.fractional and relevant_from is None:
        stderr.write(f"trec_eval: -l {opts.level_text!r}: the relevance level must be a number\n")
        return 1
    # a small, clean qrels file is read without pyarrow (small_files), anything else by workbench.formats
    qrels = None if opts.fractional else small_files.read_qrels(qrels_path)
    small = qrels is not None
    if qrels is None:
        from evaluation.engine.qrels import Qrels
        from workbench.formats import FormatError, read_qrels_table

        notes: list[str] = []
        try:
            table = read_qrels_table(qrels_path, grades="fractional" if opts.fractional else "truncate", notes=notes)
            qrels = Qrels.from_frame(table, fractional_from=relevant_from if opts.fractional else None)
        except (FormatError, OSError, ValueError) as exc:
            stderr.write(f"trec_eval: {_one_line(exc, qrels_path)}\n")
            return 2
        stderr.write("".join(f"trec_eval: warning: {note}\n" for note in notes))
    for run_path in run_paths:  # several run files (a workbench extension): one block of lines each
        code = _evaluate_run(opts, qrels, run_path, stdout, stderr, name_it=len(run_paths) > 1, small=small)
        if code:
            return code
    return 0


def _evaluate_run(opts: Options, qrels, run_path: str, stdout: TextIO, stderr: TextIO, *, name_it: bool = False,
                  small: bool = False) -> int:
    """One run file's lines; with several files each block starts with its runid line. ``small``: the qrels
    were read by :mod:`~evaluation.engine.small_files`, which may then read and rank the run too."""
    from evaluation.engine import small_files
    from evaluation.engine.evaluator import Evaluator
    from evaluation.engine.spec import MeasureError

    run = small_files.read_run(run_path) if small else None
    if run is None:
        from workbench.formats import FormatError, read_run_arrays

        try:
            source = sys.stdin.buffer if run_path == "-" else run_path
            run = read_run_arrays(source, name=run_path)
        except (FormatError, OSError, ValueError) as exc:
            stderr.write(f"trec_eval: {_one_line(exc, run_path)}\n")
            return 2
    try:
        evaluator = Evaluator(qrels, opts.measures or None, relevance_level=opts.level,
                              judged_only=opts.judged_only, max_depth=opts.max_depth,
                              complete=opts.complete, num_docs_in_coll=opts.coll_size)
        if isinstance(run, small_files.SmallRun):
            ranked = small_files.rank(qrels, run, max_depth=opts.max_depth, judged_only=opts.judged_only)
            result = evaluator.score(ranked, {0: run.tag})[run.tag]
        else:
            result = evaluator.evaluate(run, tag=run.tag)
    except MeasureError as exc:
        stderr.write(f"trec_eval: {exc}\n")
        return exc.exit_code
    except ValueError as exc:
        stderr.write(f"trec_eval: {run_path}: {exc}\n")
        return 4
    if not result.qids:
        stderr.write("trec_eval: No queries with both results and relevance info\n")
        return 7
    n_topics = len(qrels.topics) if opts.complete else len(result.qids)
    lines = result_lines(result, opts.query, opts.summary, opts.aggregate, n_topics)
    if name_it and not any(line.startswith("runid ") for line in lines):
        lines.insert(0, f"{'runid':<22}\tall\t{result.tag}\n")
    stdout.write("".join(lines))
    return 0


def _one_line(exc: Exception, path: str) -> str:
    if isinstance(exc, OSError):
        return f"{path}: cannot read: {exc.strerror or exc}"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if text.startswith(path) else f"{path}: {text}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
