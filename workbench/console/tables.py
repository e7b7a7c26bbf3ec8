"""Tables of the organizer's console (django-tables2)."""

from __future__ import annotations

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from workbench.access.audit import AuditEntry
from workbench.access.people import ROLE_LABELS, roles_of
from workbench.jobs import kinds as job_kinds
from workbench.models import Job, Run


class JobTable(tables.Table):
    id = tables.Column(verbose_name="Job", linkify=lambda record: reverse("job", args=[record.pk]))
    kind = tables.Column(verbose_name="What")
    collection = tables.Column(verbose_name="Collection")
    started_by = tables.Column(verbose_name="Started by")
    created_at = tables.DateTimeColumn(verbose_name="Started", format="Y-m-d H:i")
    status = tables.Column(verbose_name="Status")
    outcome = tables.Column(verbose_name="Outcome", empty_values=(), orderable=False)

    class Meta:
        model = Job
        fields = ("id", "kind", "collection", "started_by", "created_at", "status")
        attrs = {"class": "data"}
        order_by = "-created_at"
        empty_text = "No job yet: uploads, pool builds, evaluation reports and release bundles show here."

    def render_kind(self, record: Job):
        """The kind's declared label (workbench.jobs.kinds), its help on hover."""
        kind = job_kinds.shown(record)
        return format_html('<span title="{}">{}</span>', kind["help"], kind["label"]) if kind["help"] else kind["label"]

    def render_outcome(self, record: Job):
        if record.status == Job.Status.FAILED:
            return record.error
        lines = record.result.get("lines") if isinstance(record.result, dict) else None
        return "; ".join(lines[:3]) + (" …" if len(lines) > 3 else "") if lines else record.step


class RunTable(tables.Table):
    tag = tables.Column(verbose_name="Run")
    team = tables.Column()
    contributes = tables.BooleanColumn(verbose_name="Contributes")
    pool_priority = tables.Column(verbose_name="Priority")
    run_type = tables.Column(verbose_name="Type")
    num_topics = tables.Column(verbose_name="Topics")
    num_entries = tables.Column(verbose_name="Lines")
    imported_at = tables.DateTimeColumn(verbose_name="Imported", format="Y-m-d H:i")

    class Meta:
        model = Run
        fields = ("tag", "team", "contributes", "pool_priority", "run_type", "num_topics", "num_entries",
                  "imported_at")
        attrs = {"class": "data"}
        empty_text = "No run yet: upload the participants' runs."


class RunSelectTable(RunTable):
    """The runs page: a checkbox per run, to change many runs at once."""

    select = tables.Column(accessor="pk", orderable=False, verbose_name="Select")
    source_file = tables.Column(verbose_name="File")

    class Meta(RunTable.Meta):
        sequence = ("select", "tag", "team", "contributes", "pool_priority", "run_type", "...")
        fields = (*RunTable.Meta.fields, "source_file")

    def render_select(self, value, record):
        return format_html('<input type="checkbox" name="runs" value="{}" form="runs-bulk" aria-label="{}">',
                           value, f"Select run {record.tag}")


class PeopleTable(tables.Table):
    username = tables.Column(verbose_name="Account",
                             linkify=lambda record: reverse("workbench:person", args=[record.pk]))
    email = tables.Column(verbose_name="E-mail")
    roles = tables.Column(verbose_name="Roles", empty_values=(), orderable=False)
    state = tables.Column(verbose_name="State", empty_values=(), orderable=False)
    last_login = tables.DateTimeColumn(verbose_name="Last login", format="Y-m-d H:i")

    class Meta:
        attrs = {"class": "data"}
        fields = ("username", "email", "roles", "state", "last_login")

    def render_roles(self, record):
        labels = [ROLE_LABELS[r] for r in roles_of(record)]
        if record.is_superuser:
            labels.insert(0, "Superuser (organizer)")
        return ", ".join(labels) or mark_safe('<span class="muted">none</span>')  # noqa: S308 - constant

    def render_state(self, record):
        if not record.is_active:
            return "deactivated"
        return "active" if record.has_usable_password() else "invited (no password yet)"


class AuditTable(tables.Table):
    created_at = tables.DateTimeColumn(verbose_name="When", format="Y-m-d H:i:s")
    actor = tables.Column(verbose_name="Who", default="(a command on the server)")
    action = tables.Column(verbose_name="What")
    detail = tables.Column(verbose_name="Detail", default="")

    class Meta:
        model = AuditEntry
        fields = ("created_at", "actor", "action", "detail")
        attrs = {"class": "data"}
        order_by = "-created_at"
        empty_text = "Nothing recorded yet: changes of settings, organizers, qrels policy and releases show here."
