"""Job kinds, each declared once: a :class:`JobKind` in its app's ``tasks.py`` (the module's ``JOB_KINDS``) names
the job (the ``Job.kind`` its rows carry), its label and help, its task, the parameters a job records, whether a
job whose worker died may run again (it writes in one transaction, so a retry cannot double anything) and, when
it splits into parts any worker claims, its part and join tasks.

:func:`autodiscover` imports every project app's ``tasks`` module and registers what it declares, with the sweep's
plan for a dead job of each task (:func:`workbench.jobs.lifecycle.recovery`, :func:`workbench.jobs.subjobs.recovery`). It
runs once, when the kinds are first asked for (:func:`discover`: by :func:`get`, :func:`table`, :func:`shown`, the
console's upload pages, and the sweep before it reads its plans), not in ``django.setup()``: a command that starts
no job does not import every app's tasks (pandas, pyarrow). A worker that has imported no page still knows every
kind (its sweep asks first); nothing is registered as a side effect of importing a view or ``urls.py``.
:func:`table` gives the docs' and the job pages' list, and :func:`shown` what a job's page says of its kind (its
label and help, its progress in the kind's units, where it leads back to).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

from workbench.app_modules import app_modules
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs

__all__ = ["KINDS", "JobKind", "autodiscover", "discover", "get", "register", "shown", "table"]


@dataclass(frozen=True)
class JobKind:
    """One kind of background job. ``retry``: a job whose worker died is queued again, once; ``part`` and
    ``join``: the tasks of a job split into parts (each part retried once, the join with ``join_retry``);
    ``on_failed(job)``: what a job that died for good leaves right (a submission refused, ...). ``unit``: what the
    job's progress counts (``pair``: "40 of 120 pairs"; empty: steps); ``back``: the page (a URL name taking the
    collection's slug) and its words, that the job's page links back to for someone who does not organize the
    collection (an organizer goes back to its console)."""

    name: str
    label: str
    task: Any = field(repr=False)
    help: str = ""
    params: tuple[str, ...] = ()
    retry: bool = False
    part: Any = field(default=None, repr=False)
    join: Any = field(default=None, repr=False)
    join_retry: bool = True
    on_failed: Callable | None = field(default=None, repr=False)
    unit: str = ""
    back: tuple[str, str] | None = None

    @property
    def splits(self) -> bool:
        return self.part is not None

    @property
    def task_path(self) -> str:
        return self.task.module_path


#: every declared kind by name, in the apps' order then their declared order
KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    """Add (or replace) a kind and register the sweep's plan for its tasks."""
    KINDS[kind.name] = kind
    if kind.retry or kind.on_failed is not None:
        jobs.recovery(kind.task, retry=kind.retry, on_failed=kind.on_failed)
    if kind.splits:
        subjobs.recovery(kind.part, kind.join, join_retry=kind.join_retry)
    return kind


def autodiscover() -> list[str]:
    """Import every project app's ``tasks`` module and register the kinds it declares (``JOB_KINDS``); the names
    registered. Calling it again changes nothing."""
    found = []
    for _app, module in app_modules("tasks"):
        for kind in getattr(module, "JOB_KINDS", ()):
            register(kind)
            found.append(kind.name)
    return found


#: autodiscover(), run the first time it is asked for only
_discovered = functools.cache(autodiscover)


def discover() -> dict[str, JobKind]:
    """Every declared kind (the apps' ``tasks`` modules imported, with the upload kinds they declare, the first
    time only)."""
    _discovered()
    return KINDS


#: the sweep asks for the kinds before it reads what to do with a dead job of each task
jobs.plans_from(discover)


def get(name: str) -> JobKind | None:
    return discover().get(name)


def table() -> list[dict]:
    """The kinds as the docs' table shows them: name, label, help, task, parameters, retried, split."""
    return [{"name": k.name, "label": k.label, "help": k.help, "task": k.task_path, "params": list(k.params),
             "retry": k.retry, "splits": k.splits, "unit": k.unit} for k in discover().values()]


def shown(job) -> dict:
    """What a job's page and the jobs list say of its kind: ``label`` and ``help`` (the job's own ``kind`` when
    no kind of that name is declared), ``progress`` ("40 of 120 pairs", "step 2 of 5", "" before any total) and
    ``back`` (url, words) for someone who does not organize its collection, or None."""
    kind = discover().get(job.kind)
    unit = kind.unit if kind else ""
    progress = ""
    if job.total:
        progress = (f"{job.done:,} of {job.total:,} {unit}{'s' if job.total != 1 else ''}" if unit
                    else f"step {job.done:,} of {job.total:,}")
    back = None
    if kind is not None and kind.back is not None and job.collection is not None:
        back = (reverse(kind.back[0], args=[job.collection.slug]), kind.back[1])
    return {"label": kind.label if kind else job.kind.capitalize(), "help": kind.help if kind else "",
            "unit": unit, "progress": progress, "back": back}
