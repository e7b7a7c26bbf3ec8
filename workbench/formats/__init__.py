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

from workbench.formats.documents import DocumentRecord, iter_documents
from workbench.formats.errors import FormatError
from workbench.formats.qrels import read_qrels, read_qrels_table, write_qrels
from workbench.formats.run_arrays import RunArrays, read_run_arrays
from workbench.formats.runs import RunFile, read_run, write_run
from workbench.formats.sources import open_text
from workbench.formats.topics import TopicRecord, read_topics

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
