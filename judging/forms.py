import json

from django import forms

from judging import machine
from pooling.models import Pool
from workbench.access.people import assessors
from workbench.console.param_fields import param_field

_MAX_ID = 2**63 - 1


def _ids_in_range(values) -> None:
    """A posted id beyond what the database holds is an invalid choice, not a crash (OverflowError)."""
    for value in values if isinstance(values, list | tuple) else [values]:
        text = str(value).strip()
        if text.lstrip("-").isdigit() and abs(int(text)) > _MAX_ID:
            raise forms.ValidationError(f"Select a valid choice. {text[:30]} is not one of the available choices.",
                                        code="invalid_choice")


class IdChoiceField(forms.ModelChoiceField):
    def to_python(self, value):
        _ids_in_range(value)
        return super().to_python(value)


class IdMultipleChoiceField(forms.ModelMultipleChoiceField):
    def _check_values(self, value):
        _ids_in_range(value)
        return super()._check_values(value)


class JudgmentForm(forms.Form):
    """One judgment post. ``grade`` comes from the pressed button; "cannot judge" is not a grade."""

    grade = forms.IntegerField(required=False)
    cannot_judge = forms.BooleanField(required=False)
    client_token = forms.CharField(max_length=64)
    time_spent_ms = forms.IntegerField(required=False, min_value=0, max_value=24 * 3600 * 1000)
    shown_at = forms.CharField(max_length=200, required=False)
    comment = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    rationale = forms.CharField(required=False, max_length=20000, widget=forms.Textarea)
    passages = forms.CharField(required=False, max_length=5000)

    def __init__(self, *args, grades: list[int], text_length: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.grades = grades
        self.text_length = text_length

    def clean_passages(self) -> list[list[int]]:
        """``[[start, end], ...]``: character offsets into the document's text, each inside it."""
        raw = self.cleaned_data.get("passages") or ""
        if not raw.strip():
            return []
        try:
            ranges = json.loads(raw)
        except json.JSONDecodeError:
            raise forms.ValidationError("The passages are not readable; select them again.") from None
        limit = self.text_length if self.text_length is not None else 10**9
        ok = isinstance(ranges, list) and len(ranges) <= 50 and all(
            isinstance(r, list) and len(r) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in r)
            and 0 <= r[0] < r[1] <= limit for r in ranges)
        if not ok:
            raise forms.ValidationError("The passages are not ranges of the document's text; select them again.")
        return sorted(ranges)

    def clean(self):
        data = super().clean()
        if data.get("cannot_judge"):
            data["grade"] = None
        elif data.get("grade") is None:
            raise forms.ValidationError("Choose a grade, or 'cannot judge'.")
        elif data["grade"] not in self.grades:
            self.add_error("grade", f"{data['grade']} is not on this collection's scale.")
        return data


class AssignForm(forms.Form):
    pool = IdChoiceField(queryset=None, empty_label=None)
    assessors = IdMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple)
    topics = IdMultipleChoiceField(queryset=None, required=False,
                                            help_text="Leave empty for every topic of the pool.")
    overlap = forms.IntegerField(min_value=1, initial=1,
                                 help_text="How many assessors judge each document independently, counting those "
                                           "who hold it already: to add a second assessor to a topic, name them "
                                           "with overlap 2.")
    batch_size = forms.IntegerField(min_value=1, required=False,
                                    help_text="Assign batches of this many documents instead of whole topics.")

    def __init__(self, *args, collection, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pool"].queryset = Pool.objects.filter(collection=collection)
        self.fields["assessors"].queryset = assessors()
        self.fields["assessors"].help_text = ("Accounts with the assessor role (give it on the People page).")
        self.fields["topics"].queryset = collection.topics.order_by("id")


class AdjudicationForm(forms.Form):
    qid = forms.CharField(max_length=64)
    docno = forms.CharField(max_length=200)
    grade = forms.IntegerField()
    comment = forms.CharField(required=False, max_length=5000)


class TransferForm(forms.Form):
    """Move an assignment's unjudged documents to another assessor, or take them back."""

    action = forms.ChoiceField(choices=[("transfer", "Reassign"), ("withdraw", "Unassign")])
    to = IdChoiceField(queryset=None, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["to"].queryset = assessors()

    def clean(self):
        data = super().clean()
        if data.get("action") == "transfer" and not data.get("to"):
            self.add_error("to", "Choose the assessor who takes the documents over.")
        return data


class DuplicateDetectForm(forms.Form):
    """Start near-duplicate detection over the collection's documents."""

    threshold = forms.FloatField(min_value=0.05, max_value=1.0, initial=0.7,
                                 help_text="Lowest estimated Jaccard similarity of word shingles (1: exact copies only).")
    shingle = forms.IntegerField(min_value=1, max_value=20, initial=3, help_text="Words per shingle.")


class DuplicateDecisionForm(forms.Form):
    """The organizer's decision on one near-duplicate class."""

    ACTIONS = [("accepted", "Accept: propagate judgments"), ("split", "Split: judge each document"),
               ("proposed", "Back to proposed")]
    status = forms.ChoiceField(choices=ACTIONS, required=False)
    judge_members = forms.ChoiceField(choices=[("", "unchanged"), ("1", "yes"), ("0", "no")], required=False)
    remove = forms.CharField(max_length=200, required=False)


class MachineJudgeForm(forms.Form):
    """Run a machine judge on a pool. A chat judge's endpoint is one the deployment declares (``JUDGE_ENDPOINTS``),
    chosen by name with one of its models: no address and no key is ever typed on the web."""

    name = forms.SlugField(max_length=64, initial="embedding", help_text="A name for this judge configuration.")
    kind = forms.ChoiceField(label="Judge")
    pool = forms.ModelChoiceField(queryset=Pool.objects.none(), empty_label=None)
    endpoint = forms.ChoiceField(required=False, label="Endpoint (openai)")
    model = forms.ChoiceField(required=False, label="Model (openai)")

    def __init__(self, *args, collection, judges, endpoints: dict[str, list[str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.endpoints = endpoints
        self.fields["kind"].choices = [(c.name, c.label) for c in judges]
        self.fields["kind"].initial = judges.default
        self.fields["pool"].queryset = Pool.objects.filter(collection=collection).order_by("name")
        self.fields["endpoint"].choices = [("", "—")] + [(name, name) for name in endpoints]
        self.fields["model"].choices = [("", "—")] + [(name, [(m, m) for m in models])
                                                      for name, models in endpoints.items()]
        self.fields["endpoint"].help_text = (
            "The chat endpoints this deployment declares; the server holds their keys." if endpoints else
            "This deployment declares no chat endpoint: the server's administrator lists them in the "
            "JUDGE_ENDPOINTS setting.")
        self.judges = judges
        #: option field name -> the judges that read it (one field per declared option, from the declarations)
        self.option_users: dict[str, list[str]] = {}
        for p, users in machine.options():
            self.fields[p.name] = param_field(p)
            self.fields[p.name].label = f"{p.title} ({', '.join(users)})"
            self.option_users[p.name] = users

    #: the fields every judge takes, shown above the chosen judge's own
    COMMON = ("name", "kind", "pool")

    def option_groups(self) -> list[dict]:
        """The fields beyond :attr:`COMMON`, grouped by the judges that read them (the endpoint and model by those
        that need the network, each declared option by the judges that declare it), in declaration order: the
        page shows only the chosen judge's groups (JavaScript), and every group under its judges' labels without."""
        users = {"endpoint": [j.name for j in self.judges if j.needs_network]}
        users["model"] = users["endpoint"]
        users.update(self.option_users)
        groups: dict[tuple[str, ...], list] = {}
        for name, readers in users.items():
            if readers:  # an option no judge reads (none declared) is not shown
                groups.setdefault(tuple(readers), []).append(self[name])
        labels = {j.name: j.label for j in self.judges}
        return [{"judges": " ".join(readers), "labels": [labels.get(r, r) for r in readers], "fields": fields}
                for readers, fields in groups.items()]

    def clean(self):
        data = super().clean()
        kind = self.judges.get(data["kind"]) if data.get("kind") in self.judges else None
        data["options"] = self._options(kind, data)
        if kind is None or not kind.needs_network:
            data["endpoint"] = data["model"] = ""
            return data
        endpoint, model = data.get("endpoint"), data.get("model")
        if not self.endpoints:
            raise forms.ValidationError("This deployment declares no chat endpoint for the openai judge (the "
                                        "server's administrator lists them in the JUDGE_ENDPOINTS setting).")
        if not endpoint:
            self.add_error("endpoint", "Choose one of the endpoints this deployment declares.")
        elif model not in self.endpoints.get(endpoint, []):
            self.add_error("model", f"Choose a model that endpoint {endpoint} serves: "
                                    f"{', '.join(self.endpoints[endpoint])}.")
        return data

    def _options(self, kind, data: dict) -> dict:
        """The chosen judge's options that were filled in, each checked by its declaration (an error on the field
        names the option, the bound and the value); the other judges' fields are ignored."""
        given = {}
        for p in kind.options if kind is not None else ():
            if data.get(p.name) in (None, ""):
                continue
            problem = p.problem(data[p.name])
            if problem:
                self.add_error(p.name, problem)
            else:
                given[p.name] = data[p.name]
        return given
