"""The console's page of corpora used by reference: what the collection points to, and a form to add one
(indexed by a background job)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from workbench.access.rules import organizer_required
from workbench.console.forms import CorpusForm
from workbench.corpora.corpus import corpus_reference_add
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection
from workbench.tasks import index_corpus


@organizer_required
def corpora(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    form = CorpusForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            reference = corpus_reference_add(collection=collection, location=form.cleaned_data["location"],
                                              format=form.cleaned_data["format"] or None)
        except ValidationError as exc:
            form.add_error("location", exc)
        else:
            job = jobs.job_start(index_corpus, kind="corpus index", user=request.user, collection=collection,
                                 params={"reference": reference.pk, "location": reference.location})
            return redirect("job", job_id=job.pk)
    return render(request, "workbench/console/corpora.html", {
        "collection": collection, "form": form, "references": collection.corpus_references.all()},
        status=400 if request.method == "POST" else 200)
