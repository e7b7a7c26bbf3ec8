"""The file formats each kind of file may come in, as one :class:`Vocabulary` per kind. Django-free.

The names are the readers' own (``topics.FORMATS``, ``documents.FORMATS``): a reader without a label here,
or a label without a reader, fails at import. Upload forms, command help and the README's list of formats
are written from these labels (a test checks the README and the upload page against them, and imports a
tiny file in every format listed).
"""

from __future__ import annotations

from workbench.formats import documents, topics
from workbench.formats.vocabulary import Vocabulary

__all__ = ["DOCUMENT_FORMATS", "FILE_FORMATS", "QRELS_FORMATS", "RUN_FORMATS", "TOPIC_FORMATS", "formats_help"]

TOPIC_FORMATS = Vocabulary.of("topics format", topics.FORMATS, {
    "trec": "TREC SGML (<top>)",
    "xml": "TREC XML (<topics><topic number=...>)",
    "tsv": "TSV (qid<TAB>title)",
    "jsonl": "JSONL (qid or query_id or id, title or text or query)",
})
DOCUMENT_FORMATS = Vocabulary.of("documents format", ("trec", "jsonl", "tsv"), {
    "trec": "TREC SGML (<DOC><DOCNO>)",
    "jsonl": "JSONL (docno or id, title, text or contents or body)",
    "tsv": "TSV (docno<TAB>text or docno<TAB>title<TAB>text)",
})
if set(DOCUMENT_FORMATS.names) != set(documents.FORMATS):
    raise ValueError(f"documents formats without a label or a reader: "
                     f"{sorted(set(DOCUMENT_FORMATS.names) ^ set(documents.FORMATS))}")
RUN_FORMATS = Vocabulary.of("run format", ("trec",), {"trec": "TREC run files (qid Q0 docno rank score tag)"})
QRELS_FORMATS = Vocabulary.of("qrels format", ("trec",), {"trec": "TREC qrels (qid iteration docno grade)"})

#: upload kind -> its formats
FILE_FORMATS = {"topics": TOPIC_FORMATS, "documents": DOCUMENT_FORMATS, "runs": RUN_FORMATS,
                "qrels": QRELS_FORMATS}


def formats_help(kind: str) -> str:
    """The formats of ``kind`` as a help text says them: ``"TREC SGML (<DOC><DOCNO>), JSONL (...) or TSV (...)"``."""
    return FILE_FORMATS[kind].describe()
