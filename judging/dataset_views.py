"""The console's form that imports a whole collection from irds:ID or a BEIR folder (a background job)."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from judging.tasks import import_dataset
from workbench.access.rules import organizer_required
from workbench.corpora.corpus import location_refusal
from workbench.formats import FormatError, irds
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection


class DatasetForm(forms.Form):
    location = forms.CharField(max_length=1000, label="Dataset",
                               help_text="irds:ID (ir_datasets, read from its copy on the server, never downloaded) "
                                         "or a BEIR folder on the server under CORPUS_DIRS.")
    split = forms.SlugField(max_length=50, initial="test", help_text="BEIR: the qrels file qrels/SPLIT.tsv.")

    def clean(self):
        data = super().clean()
        location = (data.get("location") or "").strip()
        if not location:
            return data
        refusal = location_refusal(location)
        try:
            if refusal is None and irds.dataset_id(location) is not None:
                irds.load(location)
            elif refusal is None:
                irds.beir_files(location, data.get("split") or "test")
        except FormatError as exc:
            refusal = str(exc)
        if refusal:
            self.add_error("location", ValidationError(refusal))
        return data


@organizer_required
def dataset(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    form = DatasetForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        job = jobs.job_start(import_dataset, kind="dataset import", user=request.user, collection=collection,
                             params={"location": form.cleaned_data["location"].strip(),
                                     "split": form.cleaned_data["split"]})
        return redirect("job", job_id=job.pk)
    return render(request, "judging/dataset.html", {"collection": collection, "form": form},
                  status=400 if request.method == "POST" else 200)
