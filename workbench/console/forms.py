"""Forms of the organizer's console: a collection's settings, uploads and people."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from workbench.access.people import ROLE_LABELS
from workbench.models import Collection, Run, slug_validator, validate_scale


class CollectionForm(forms.ModelForm):
    """Name, description, relevant-from, depth, guidelines; the scale comes from :class:`GradeFormSet`."""

    class Meta:
        model = Collection
        fields = ["slug", "name", "description", "relevant_from", "max_depth", "guidelines",
                  "researchers_may_download", "document_url", "judge_by_link"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3}),
                   "guidelines": forms.Textarea(attrs={"rows": 10}),
                   "document_url": forms.TextInput(attrs={"placeholder": "https://example.org/doc/{docno}",
                                                          "inputmode": "url"})}
        help_texts = {"slug": "Short id used in URLs and commands: lowercase letters, digits, '-' and '_'.",
                      "guidelines": "Markdown. Assessors see this while they judge.",
                      "researchers_may_download": "Researchers may see results and download the qrels.",
                      "document_url": "Where assessors can read a document the workbench holds no text for: an "
                                      "http(s) address with {docno} where the document's id goes, e.g. "
                                      "https://example.org/doc/{docno}. Leave empty if there is none.",
                      "judge_by_link": "Assessors may grade a document without text after reading it at the "
                                       "document URL. Off: they can only skip it or say they cannot judge it."}
        labels = {"document_url": "Document URL", "judge_by_link": "Judging by link"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["slug"].validators = [slug_validator]
        if self.instance.pk:  # the slug is in every URL, command and export: fixed once created
            self.fields["slug"].disabled = True


class GradeForm(forms.Form):
    grade = forms.IntegerField(min_value=-10, max_value=100)
    label = forms.CharField(max_length=100)
    description = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                  help_text="What an assessor should give this grade for.")
    gain = forms.DecimalField(required=False, min_value=0, max_value=1000, decimal_places=6, max_digits=12,
                              help_text="Optional: its gain in nDCG, DCG, ERR (e.g. 0.6); empty: the grade.")


class BaseGradeFormSet(forms.BaseFormSet):
    def scale(self) -> list[dict]:
        rows = [{k: v for k, v in form.cleaned_data.items() if k in ("grade", "label", "description")}
                | ({"gain": float(form.cleaned_data["gain"])} if form.cleaned_data.get("gain") is not None else {})
                for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
        return sorted(rows, key=lambda row: row["grade"])

    def clean(self):
        if any(self.errors):
            return
        try:
            validate_scale(self.scale())
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None


GradeFormSet = forms.formset_factory(GradeForm, formset=BaseGradeFormSet, extra=2, can_delete=True, max_num=12,
                                     absolute_max=12)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple) and not data:
            return [single(None, initial)]  # "This field is required."
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    """One kind of upload: its files and the options that kind takes (the view shows only those)."""

    files = MultipleFileField(help_text="Plain text or .gz; large files are streamed to disk.")
    manifest = forms.FileField(
        required=False, label="Manifest",
        help_text="Optional CSV or TSV file with a header row: tag, then any of team, contributes (yes/no), priority, "
                  "type, description; one line per run, matched by run tag. Where it says nothing, the run file's "
                  "ir_metadata header and then the values below apply.")
    replace = forms.BooleanField(required=False, help_text="Update what is already there instead of refusing.")
    contributes = forms.BooleanField(required=False, initial=True,
                                     help_text="The runs contribute documents to the pool.")
    team = forms.CharField(max_length=200, required=False)
    pool_priority = forms.IntegerField(min_value=1, initial=1, required=False,
                                       help_text="The team's priority for pooling: 1 is pooled first.")
    description = forms.CharField(max_length=2000, required=False)
    assessor = forms.CharField(max_length=150, required=False,
                               help_text="Who made these judgments (default: the file's name).")


class InviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False, help_text="Optional: the link is e-mailed where e-mail is set up.")
    roles = forms.MultipleChoiceField(choices=list(ROLE_LABELS.items()), widget=forms.CheckboxSelectMultiple,
                                      initial=["assessor"])


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=list(ROLE_LABELS.items()), widget=forms.CheckboxSelectMultiple,
                                      required=False)


class RunsBulkForm(forms.Form):
    """Set team, contribution, priority and/or type on many runs at once (an empty field: unchanged)."""

    SCOPES = [("selected", "the runs ticked below"), ("all", "every run of the collection")]
    CONTRIBUTES = [("", "unchanged"), ("yes", "yes: offered to the pool"), ("no", "no: not offered to the pool")]

    runs = forms.ModelMultipleChoiceField(queryset=Run.objects.none(), required=False,
                                          widget=forms.MultipleHiddenInput)
    scope = forms.ChoiceField(choices=SCOPES, initial="selected", widget=forms.RadioSelect, label="Apply to")
    team = forms.CharField(max_length=200, required=False, help_text="Empty: unchanged.")
    contributes = forms.ChoiceField(choices=CONTRIBUTES, required=False)
    pool_priority = forms.IntegerField(min_value=1, required=False, label="Priority",
                                       help_text="1 is pooled first. Empty: unchanged.")
    run_type = forms.CharField(max_length=32, required=False, label="Type",
                               help_text="e.g. automatic, manual. Empty: unchanged.")

    def __init__(self, *args, collection: Collection, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["runs"].queryset = collection.runs.all()
        self.fields["runs"].error_messages["invalid_choice"] = "Run %(value)s is not a run of this collection."

    def clean_run_type(self) -> str:
        value = self.cleaned_data["run_type"].strip()
        if any(ch.isspace() for ch in value):
            raise ValidationError("One word, e.g. automatic or manual.")
        return value

    def values(self) -> dict:
        """What to set, for :func:`workbench.collections.services.runs_update`."""
        data = self.cleaned_data
        return {"team": data["team"].strip() or None,
                "contributes": {"yes": True, "no": False}.get(data["contributes"]),
                "pool_priority": data["pool_priority"], "run_type": data["run_type"].strip().lower() or None}

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        if not any(v is not None for v in self.values().values()):
            raise ValidationError("Give a team, a contribution, a priority or a type to set.")
        if data["scope"] == "selected" and not data["runs"]:
            raise ValidationError("Tick the runs to change (or apply to every run of the collection).")
        return data


class CorpusForm(forms.Form):
    """A corpus used by reference: a file or BEIR folder under ``CORPUS_DIRS``, or ``irds:ID``."""

    location = forms.CharField(max_length=1000, label="Corpus",
                               help_text="A documents file (TREC SGML, JSONL, TSV; .gz too; Parquet) or a BEIR folder on the "
                                         "server, under a folder named in CORPUS_DIRS; or irds:ID (ir_datasets, "
                                         "from its copy on the server).")
    format = forms.ChoiceField(choices=[("", "detect"), ("trec", "TREC SGML"), ("jsonl", "JSONL"), ("tsv", "TSV"), ("parquet", "Parquet")],
                               required=False, help_text="The file's format (detected from its start by default).")

    def clean_location(self) -> str:
        from workbench.corpora.corpus import location_refusal

        location = self.cleaned_data["location"].strip()
        refusal = location_refusal(location)
        if refusal:
            raise ValidationError(refusal)
        return location
