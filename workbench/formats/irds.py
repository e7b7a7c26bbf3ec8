"""ir_datasets ids (``irds:ID``) and BEIR folders, read from a copy on this machine, never downloaded.

- An ``irds:ID`` corpus is read through ir_datasets' own docstore (``docs_store().get_many``); its topics
  and qrels through ``queries_iter``/``qrels_iter``. ir_datasets reads its files under its home directory
  (``IR_DATASETS_HOME``, default ``~/.ir_datasets``); a dataset whose documents file is not there is refused
  in one line rather than downloaded.
- A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``)
  and ``qrels/<split>.tsv`` (a ``query-id corpus-id score`` header, then one judgment a line). The corpus is
  an ordinary JSONL documents file and the queries an ordinary JSONL topics file; only the qrels need
  turning into TREC's four columns, done here.

Documents come out as :class:`DocumentRecord` cleaned and checked as an import would.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

from workbench.formats import identifiers
from workbench.formats.documents import DocumentRecord
from workbench.formats.errors import FormatError

PREFIX = "irds:"


def dataset_id(location: str) -> str | None:
    """The ir_datasets id of ``irds:ID``, else None."""
    return location[len(PREFIX):].strip() if location.startswith(PREFIX) else None


class RemoteFileRefused(BaseException):
    """Raised where ir_datasets would fetch a file it lacks from the web. A BaseException, so that its own
    retry loops (``except Exception``, then the next mirror) do not swallow it and try the network again."""


def _refuse(self, *args, **kwargs):
    raise RemoteFileRefused(getattr(self, "url", None) or type(self).__name__)


def _never_download() -> None:
    """Every way ir_datasets fetches a file from the web refuses instead (local copies still read)."""
    from ir_datasets.util import download

    for remote in (download.RequestsDownload, download.GoogleDriveDownload, download.GoogleCloudBucketStream):
        remote.stream = _refuse
    download.RequestsDownload.__iter__ = _refuse


@contextmanager
def offline(location: str):
    """A file ir_datasets would download becomes one line naming the dataset."""
    try:
        yield
    except RemoteFileRefused as exc:
        raise FormatError([f"{location}: a file of this dataset is not on this machine ({exc}); the workbench "
                           "never downloads: put the dataset's files under IR_DATASETS_HOME first"]) from None
    except OSError as exc:  # its own files: the reason, never the server's path
        raise FormatError([f"{location}: a file of this dataset cannot be read ({exc.strerror or type(exc).__name__})"
                           ]) from None


def load(location: str):
    """The ir_datasets dataset named by ``irds:ID``; an unknown id, or one whose documents are not on this
    machine, is one line."""
    import ir_datasets

    _never_download()

    name = dataset_id(location) or location
    try:
        dataset = ir_datasets.load(name)
    except KeyError:
        raise FormatError([f"{location}: no such ir_datasets id (see https://ir-datasets.com/ for the ids)"]) from None
    return dataset


def _local_docs_path(dataset) -> str | None:
    handler = dataset.docs_handler() if dataset.has_docs() else None
    path_of = getattr(handler, "docs_path", None)
    try:
        return path_of(force=False) if path_of else None
    except TypeError:
        return None


def _under_home(path: str | os.PathLike, location: str) -> str:
    """``path`` as named under ir_datasets' home, from the dataset's own folder (``vaswani/docs.txt``), never
    the server's folders above it."""
    parts = Path(path).parts
    top = (dataset_id(location) or "").split("/")[0]
    if top and top in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index(top):])
    return Path(path).name


def check_local(location: str) -> int:
    """The number of documents of ``irds:ID`` (0 if ir_datasets does not know), after checking that they are on
    this machine."""
    dataset = load(location)
    if not dataset.has_docs():
        raise FormatError([f"{location}: this ir_datasets id has no documents"])
    path = _local_docs_path(dataset)
    if path is not None and not os.path.exists(path):
        raise FormatError([f"{location}: its documents are not on this machine ({_under_home(path, location)} is missing "
                           "under IR_DATASETS_HOME; the workbench never downloads: put the files there first)"])
    with offline(location):
        store = dataset.docs_store()
        build = getattr(store, "build", None)
        if build is not None:
            build()  # ir_datasets' own lookup structure, built once beside its files
        try:
            return int(dataset.docs_count() or 0)
        except (TypeError, NotImplementedError):
            return 0


def _field(doc, names: tuple[str, ...]) -> str:
    for name in names:
        value = getattr(doc, name, None)
        if isinstance(value, str):
            return value
    return ""


def _record(doc) -> DocumentRecord:
    text = _field(doc, ("text", "body", "contents", "passage"))
    if not text and hasattr(doc, "default_text"):
        text = doc.default_text()
    title = _field(doc, ("title",))
    docno = str(doc.doc_id)
    problem = (identifiers.identifier_problem("docno", docno)
               or identifiers.text_problem(f"document {docno!r}'s text", text))
    if problem:
        raise FormatError([f"ir_datasets document {docno!r}: {problem}"])
    return DocumentRecord(docno=docno, title=identifiers.clean_text(" ".join(title.split())),
                          text=identifiers.clean_text(text.strip()), extra=MappingProxyType({}))


def get_many(location: str, docnos: Iterable[str]) -> dict[str, DocumentRecord]:
    """The documents of ``docnos`` that the dataset holds, through its docstore."""
    with offline(location):
        store = load(location).docs_store()
        return {docno: _record(doc) for docno, doc in store.get_many(list(docnos)).items()}


def topics_lines(location: str) -> Iterator[dict]:
    """The dataset's queries as topic objects (``qid``, ``title``, ``description``, ``narrative``)."""
    with offline(location):
        for query in load(location).queries_iter():
            yield {"qid": str(query.query_id), "title": _field(query, ("title", "text", "query")),
                   "description": _field(query, ("description",)), "narrative": _field(query, ("narrative",))}


def qrels_lines(location: str) -> Iterator[str]:
    """The dataset's qrels as TREC qrels lines."""
    with offline(location):
        for qrel in load(location).qrels_iter():
            yield f"{qrel.query_id} {getattr(qrel, 'iteration', '0') or '0'} {qrel.doc_id} {int(qrel.relevance)}\n"


def beir_files(folder: str | os.PathLike, split: str = "test") -> tuple[Path, Path, Path]:
    """(corpus.jsonl, queries.jsonl, qrels/<split>.tsv) of a BEIR folder, each checked to exist as a plain file
    of the folder itself: a link (to a file, or a ``qrels`` folder that is a link) is refused, never followed
    out of the folder (and so out of ``CORPUS_DIRS``)."""
    root = Path(folder)
    files = (root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv")
    for path in files:
        try:
            linked = any(p.is_symlink() for p in (path, path.parent) if p != root)
            found = path.is_file()
            inside = root.resolve() in path.resolve().parents
        except (OSError, ValueError, RuntimeError) as exc:  # a name too long, a NUL byte, a loop of links
            raise FormatError([f"{str(folder)[:200]}: cannot be read: {getattr(exc, 'strerror', None) or exc}"]) from None
        if linked or (found and not inside):
            raise FormatError([f"{folder}: {path.relative_to(root)} is a link or lies outside the folder; a BEIR "
                               "folder's files must be plain files inside it (links are not followed)"])
        if not found:
            raise FormatError([f"{folder}: not a BEIR folder: {path.relative_to(root)} is missing"])
    return files


def beir_qrels_lines(path: Path) -> Iterator[str]:
    """A BEIR qrels file (``query-id<TAB>corpus-id<TAB>score`` with a header) as TREC qrels lines."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields or (number == 1 and not fields[-1].lstrip("-").isdigit()):
                continue  # blank line, header
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                raise FormatError([f"{path}:{number}: expected query-id, corpus-id and an integer score"])
            yield f"{fields[0]} 0 {fields[1]} {fields[2]}\n"
