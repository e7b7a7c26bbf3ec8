"""Readers and writers of TREC files. Django-free: nothing here imports Django.

- runs (:func:`read_run`, :func:`write_run`): ``qid Q0 docno rank score tag``, validated like NIST's
  submission checkers (every problem reported with its line, warnings for rank/score disagreements).
- qrels (:func:`read_qrels`, :func:`write_qrels`): ``qid iter docno rel``.
- for the evaluation engine, without pandas: :func:`read_run_arrays` (trec_eval's rules, arrays and
  docno hashes) and :func:`read_qrels_table` (a pyarrow table).
- topics (:func:`read_topics`): TREC SGML ``<top>``, TREC XML ``<topics><topic number=..>``, TSV, JSONL.
- documents (:func:`iter_documents`): TREC SGML ``<DOC>``, JSONL or TSV, streamed.

Every reader takes a path (``.gz`` decompressed transparently) or a text or binary file object, and
raises :class:`FormatError` whose ``problems`` are lines ``path:LINE: what is wrong``.

In the frames of runs and qrels, ``qid`` is a pandas ``Categorical`` of strings whose categories are
sorted like ``strcmp`` (sorting by qid sorts by the strings; ``.astype(str)`` gives plain strings),
``docno`` is pandas' ``str`` dtype; rows are in file order.
"""

from importlib import import_module

#: each public name and the module that holds it: imported when first asked for (PEP 562), so that a
#: reader of one format (trec_eval reading qrels and a run) does not import the others (YAML, documents,
#: topics: a fifth of trec_eval's start-up)
_WHERE = {"DocumentRecord": "documents", "iter_documents": "documents", "FormatError": "errors",
          "read_qrels": "qrels", "read_qrels_table": "qrels", "write_qrels": "qrels", "RunArrays": "run_arrays",
          "read_run_arrays": "run_arrays", "RunFile": "runs", "read_run": "runs", "write_run": "runs",
          "open_text": "sources", "TopicRecord": "topics", "read_topics": "topics"}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DocumentRecord",
    "FormatError",
    "RunArrays",
    "RunFile",
    "TopicRecord",
    "iter_documents",
    "open_text",
    "read_qrels",
    "read_qrels_table",
    "read_run",
    "read_run_arrays",
    "read_topics",
    "write_qrels",
    "write_run",
]
