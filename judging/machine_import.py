"""A machine judge's labels made elsewhere, imported from a file (``workbench.formats.machine_labels``: TREC
qrels such as UMBRELA's output, or LARA's probability CSVs) as that machine assessor's judgments, each with
its provenance as a job records it (``MachineVerdict``: the model, the grade, the probability of relevance
where the file has one, and ``imported from FILE sha256:...`` as its reply; its time is the import's).

Labels alone are enough: the collection needs its topics, not the documents' text (a judgment names its
document by docno, as imported qrels do). Every line is checked before anything is written; a pair the judge
has judged already keeps its first label. A judge named for the first time is created as an ``imported``
machine assessor (it has no model to run here: its labels come from files or the API); each import is
listed in its configuration (file, sha256, model, format, labels, when).

A label on a document whose text reads as instructions to a judge (``judging.machine.injection``) is not a
judgment: as for labels pushed over the API (``judging.machine_labels``) and the workbench's own judges, its
verdict is flagged and the pair left to the humans (:func:`document_signs`, then
``judging.machine_services.machine_verdict_record``). On labels alone (no texts) nothing is flagged."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from judging.machine.base import Provenance, Verdict
from judging.machine.injection import instruction_signs
from judging.machine_services import FLAGGED, machine_verdict_record
from judging.models import Judgment, MachineJudge, MachineVerdict
from workbench.collections.services import ImportRefused
from workbench.collections.signals import collection_changed
from workbench.formats.errors import FormatError
from workbench.formats.machine_labels import MachineLabels, read_machine_labels
from workbench.formats.sources import Source, display_name
from workbench.models import Collection, Document

__all__ = ["FLAGGED_SAID", "IMPORTED", "MachineImportSummary", "document_signs", "imported_judge", "judged_pairs",
           "machine_labels_import"]

#: the kind of a machine judge whose labels were made elsewhere
IMPORTED = "imported"
MAX_PROBLEMS = 20
#: how a summary line says what ``flagged`` counts
FLAGGED_SAID = "flagged for humans (the document's text reads as instructions to a judge)"
_BATCH = 2000


@dataclass(frozen=True)
class MachineImportSummary:
    judge: str
    format: str
    labels: int
    recorded: int
    already: int
    topics: int
    sha256: str
    flagged: int = 0


def imported_judge(collection: Collection, name: str, *, created: dict | None = None) -> MachineJudge:
    """The collection's machine judge ``name``, created the first time as an ``imported`` machine assessor (with
    ``created``, where it came from, kept in its configuration); :class:`ImportRefused` for a name that is none."""
    name = _check_name(name)
    judge = MachineJudge.objects.filter(collection=collection, name=name).first()
    if judge is not None:
        return judge
    username = f"machine:{collection.slug}:{name}"[:150]
    user = get_user_model().objects.create_user(username=username, password=None)
    return MachineJudge.objects.create(collection=collection, name=name, kind=IMPORTED, user=user,
                                       config={"imports": [], **({"created": created} if created else {})})


def _check_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_" for c in name):
        raise ImportRefused([f"judge name {name!r} must be 1 to 64 letters, digits, '-' or '_'"])
    return name


def document_signs(collection: Collection, docnos: set[str]) -> dict[str, str]:
    """Per document whose text (title and body, as a job's judge reads it) reads as instructions to a judge,
    the phrase that does (``judging.machine.injection``); documents without text have none."""
    found, wanted = {}, sorted(docnos)
    for start in range(0, len(wanted), _BATCH):
        rows = (Document.objects.filter(collection=collection, docno__in=wanted[start:start + _BATCH])
                .values_list("docno", "title", "text"))
        for docno, title, text in rows.iterator(chunk_size=_BATCH):
            sign = instruction_signs(f"{title}\n{text}" if title else text)
            if sign:
                found[docno] = sign
    return found


def judged_pairs(judge: MachineJudge) -> set[tuple[int, str]]:
    """The (topic id, docno) pairs the judge has judged or left flagged to the humans: not recorded again."""
    done = set(MachineVerdict.objects.filter(judge=judge, ok=True).values_list("topic_id", "docno"))
    return done | set(MachineVerdict.objects.filter(judge=judge, ok=False, error__startswith=FLAGGED)
                      .values_list("topic_id", "docno"))


def machine_labels_import(*, collection: Collection, source: Source, judge: str, model: str = "",
                          name: str | None = None) -> MachineImportSummary:
    """Import the labels of ``source`` as the judgments of the machine judge named ``judge`` (created the
    first time), with ``model`` (default: the judge's name) as their model. :class:`ImportRefused` lists
    every bad line (``file:LINE: what``); nothing is imported then."""
    judge_name = _check_name(judge)
    shown = name or (Path(source).name if isinstance(source, str | Path) else display_name(source))
    labels, topics = _read(collection, source, shown)
    model = (model or judge_name).strip()[:200]
    now = timezone.now()
    reply = f"imported from {shown} sha256:{labels.sha256}"
    signs = document_signs(collection, set(labels.docno))
    with transaction.atomic():
        row = imported_judge(collection, judge_name)
        done = judged_pairs(row)
        fresh = [i for i in range(len(labels)) if (topics[labels.qid[i]], labels.docno[i]) not in done]
        flagged = _flagged(row, labels, [i for i in fresh if labels.docno[i] in signs], topics, signs,
                           Provenance(model=model), reply)
        fresh = [i for i in fresh if labels.docno[i] not in signs]
        _judgments(row, labels, fresh, topics, model, reply)
        imports = list((row.config or {}).get("imports", []))
        imports.append({"file": shown[:200], "sha256": labels.sha256, "model": model, "format": labels.format,
                        "labels": len(labels), "recorded": len(fresh), "flagged": flagged,
                        "imported_at": now.isoformat()})
        row.config = {**(row.config or {}), "imports": imports}
        row.save(update_fields=["config"])
        collection_changed.send(sender=Judgment, collection_id=collection.pk)  # rows written without post_save
    return MachineImportSummary(judge=judge_name, format=labels.format, labels=len(labels), recorded=len(fresh),
                                already=len(labels) - len(fresh) - flagged, topics=len(set(labels.qid)),
                                sha256=labels.sha256, flagged=flagged)


def _read(collection: Collection, source: Source, shown: str) -> tuple[MachineLabels, dict[str, int]]:
    """The file's labels, every one checked, and the collection's topic ids by qid."""
    try:
        labels = read_machine_labels(source, name=shown, grades=sorted(collection.grades),
                                     relevant_from=collection.relevant_from, max_problems=MAX_PROBLEMS)
    except FormatError as exc:
        raise ImportRefused(exc.problems) from None
    topics = dict(collection.topics.values_list("qid", "pk"))
    unknown = [f"{shown}:{line}: topic {qid!r} is not a topic of collection {collection.slug!r}"
               for qid, line in zip(labels.qid, labels.line, strict=True) if qid not in topics]
    if unknown:
        raise ImportRefused(unknown[:MAX_PROBLEMS] + ([f"... {len(unknown) - MAX_PROBLEMS} more"]
                                                      if len(unknown) > MAX_PROBLEMS else []))
    return labels, topics


def _judgments(judge: MachineJudge, labels: MachineLabels, rows: list[int], topics: dict, model: str, reply: str) -> None:
    """Record the labels ``rows`` as the judge's judgments, each with its verdict (in batches)."""
    judgments = Judgment.objects.bulk_create([
        Judgment(collection=judge.collection, topic_id=topics[labels.qid[i]], docno=labels.docno[i],
                 grade=labels.grade[i], assessor=judge.user.username, user=judge.user,
                 source=Judgment.Source.MACHINE) for i in rows], batch_size=_BATCH)
    MachineVerdict.objects.bulk_create([
        MachineVerdict(judge=judge, topic_id=topics[labels.qid[i]], docno=labels.docno[i], judgment=judgment,
                       ok=True, model=model, raw_reply=reply, parsed_grade=labels.grade[i],
                       probability=labels.probability[i])
        for i, judgment in zip(rows, judgments, strict=True)], batch_size=_BATCH)


def _flagged(judge: MachineJudge, labels: MachineLabels, rows: list[int], topics: dict, signs: dict, provenance: Provenance,
             reply: str) -> int:
    """Record the labels ``rows`` of documents that read as instructions to a judge as a push records them
    (``machine_verdict_record`` with the phrase): no judgment, the verdict flagged for the humans."""
    flagged = 0
    for i in rows:
        verdict = Verdict(qid=labels.qid[i], docno=labels.docno[i], ok=True, grade=labels.grade[i],
                          probability=labels.probability[i], raw_reply=reply)
        flagged += machine_verdict_record(judge=judge, verdict=verdict, topic_id=topics[labels.qid[i]],
                                          provenance=provenance, sign=signs[labels.docno[i]])
    return flagged
