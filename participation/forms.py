"""Forms of participation: the organizer's track settings and teams, and a participant's submission."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.template.defaultfilters import filesizeformat

from participation.answer_submissions import KINDS
from participation.models import Submission, Team, Track, team_name_validator
from workbench.formats import limits

TOPIC_FIELDS = [("title", "Title"), ("description", "Description"), ("narrative", "Narrative")]


class TrackForm(forms.ModelForm):
    class Meta:
        model = Track
        fields = ["open", "opens_at", "closes_at", "max_runs_per_team", "pooled_runs_per_team", "depth",
                  "require_description", "topics_published", "leaderboard"]
        widgets = {"opens_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
                   "closes_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")}
        labels = {"open": "Open for submissions", "opens_at": "Opens (UTC)", "closes_at": "Deadline (UTC)"}

    def clean(self):
        data = super().clean()
        if data.get("opens_at") and data.get("closes_at") and data["closes_at"] <= data["opens_at"]:
            self.add_error("closes_at", "The deadline must come after the opening.")
        if (data.get("pooled_runs_per_team") or 0) > (data.get("max_runs_per_team") or 0):
            self.add_error("pooled_runs_per_team", "More runs pooled than a team may submit.")
        return data


class TeamForm(forms.Form):
    name = forms.CharField(max_length=40, validators=[team_name_validator],
                           help_text="Short name; the runs' team.")
    display_name = forms.CharField(max_length=200, required=False)
    members = forms.CharField(max_length=2000, required=False,
                              help_text="Accounts of the team's members, separated by spaces or commas "
                                        "(invite them on the People page with the participant role).")

    def __init__(self, *args, track: Track, **kwargs):
        super().__init__(*args, **kwargs)
        self.track = track

    def clean_name(self):
        name = self.cleaned_data["name"]
        if Team.objects.filter(track=self.track, name__iexact=name).exists():
            raise ValidationError(f"A team {name!r} exists already in this track.")
        return name

    def clean_members(self):
        names = [n for n in self.cleaned_data["members"].replace(",", " ").split() if n]
        users = list(User.objects.filter(username__in=names, is_active=True))
        unknown = sorted(set(names) - {u.username for u in users})
        if unknown:
            raise ValidationError(f"No active account {', '.join(map(repr, unknown))}.")
        return users


class SubmissionForm(forms.Form):
    """A run file and what the team says about it. ``track`` makes the description required when the track
    asks for one (``required`` in the HTML too, so the browser stops the form before the upload); ``tags``
    are the team's runs, one of which a submission may replace (at the limit it must: ``at_limit``);
    ``staged`` is the file kept from a refused form, offered instead of choosing it again."""

    file = forms.FileField(required=False, error_messages={"required": "Choose a run file."},
                           help_text="A TREC run file (qid Q0 docno rank score tag) or an answer run (JSON "
                                     "lines), plain or .gz.")
    kind = forms.ChoiceField(choices=KINDS, initial=KINDS[0][0], required=False, label="Kind of run")
    run_type = forms.ChoiceField(choices=Submission.RunType.choices, initial=Submission.RunType.AUTOMATIC,
                                 label="Run type")
    fields_used = forms.MultipleChoiceField(choices=TOPIC_FIELDS, required=False, initial=["title"],
                                            widget=forms.CheckboxSelectMultiple, label="Topic fields used")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=5000,
                                  help_text="How the run was made (model, training data, settings).")
    priority = forms.IntegerField(min_value=1, max_value=1000, initial=1,
                                  help_text="Your ranking of this run for pooling: 1 is pooled first.")
    replaces = forms.ChoiceField(required=False, label="Replaces",
                                 help_text="A file whose run tag is one of your runs replaces that run.")

    def __init__(self, *args, track: Track | None = None, tags=(), at_limit: bool = False, staged=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.staged = staged
        self.fields["file"].help_text += (f" At most {settings.PORTAL_MAX_UPLOAD_MB:,} MB to upload (compress a "
                                          f"larger run with gzip). {limits.stated('runs')}")
        if track is not None and track.require_description:
            self.fields["description"].required = True
            self.fields["description"].help_text += " Required by the track."
            self.fields["description"].error_messages["required"] = ("Describe how the run was made (the track "
                                                                     "asks for it).")
        choices = [(t, f"run {t}") for t in tags]
        if at_limit:
            self.fields["replaces"].choices = choices  # no empty choice: the browser always sends one
            self.fields["replaces"].label = "Run to replace"
            self.fields["replaces"].help_text = "The new file must carry the same run tag."
        else:
            self.fields["replaces"].choices = [("", "nothing: a new run (or the run with the file's tag)"),
                                               *choices]
        if not tags:
            del self.fields["replaces"]
        elif not at_limit:  # a new run comes after the team's runs unless the team says otherwise
            self.fields["priority"].initial = min(len(tags) + 1, self.fields["priority"].max_value)
        if staged is None:
            self.fields["file"].required = True  # the browser asks for it before sending anything
        else:
            self.fields["keep_file"] = forms.BooleanField(
                required=False, initial=True,
                label=f"Keep the file you chose: {staged.name} ({filesizeformat(staged.size)})",
                help_text="Choose another file above to send that one instead.")

    def drop_staged(self) -> None:
        """The kept file is gone (the submission was refused): the form asks for a file again."""
        self.staged = None
        self.fields.pop("keep_file", None)
        self.fields["file"].required = True

    def clean(self):
        data = super().clean()
        if "file" not in self.errors and not data.get("file") and not (self.staged is not None and data.get("keep_file")):
            self.add_error("file", "Choose a run file." if self.staged is None
                           else "Choose a run file, or keep the one you chose before.")
        return data

