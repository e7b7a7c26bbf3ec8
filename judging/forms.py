from django import forms
from django.contrib.auth.models import User

from pooling.models import Pool


class JudgmentForm(forms.Form):
    """One judgment post. ``grade`` comes from the pressed button; "cannot judge" is not a grade."""

    grade = forms.IntegerField(required=False)
    cannot_judge = forms.BooleanField(required=False)
    client_token = forms.CharField(max_length=64)
    time_spent_ms = forms.IntegerField(required=False, min_value=0, max_value=24 * 3600 * 1000)
    shown_at = forms.CharField(max_length=200, required=False)
    comment = forms.CharField(required=False, max_length=5000, widget=forms.Textarea)
    rationale = forms.CharField(required=False, max_length=20000, widget=forms.Textarea)

    def __init__(self, *args, grades: list[int], **kwargs):
        super().__init__(*args, **kwargs)
        self.grades = grades

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
    pool = forms.ModelChoiceField(queryset=None, empty_label=None)
    assessors = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple)
    topics = forms.ModelMultipleChoiceField(queryset=None, required=False,
                                            help_text="Leave empty for every topic of the pool.")
    overlap = forms.IntegerField(min_value=1, initial=1,
                                 help_text="How many assessors judge each document independently.")
    batch_size = forms.IntegerField(min_value=1, required=False,
                                    help_text="Assign batches of this many documents instead of whole topics.")

    def __init__(self, *args, collection, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pool"].queryset = Pool.objects.filter(collection=collection)
        self.fields["assessors"].queryset = User.objects.filter(is_active=True).order_by("username")
        self.fields["topics"].queryset = collection.topics.order_by("id")


class AdjudicationForm(forms.Form):
    qid = forms.CharField(max_length=64)
    docno = forms.CharField(max_length=200)
    grade = forms.IntegerField()
    comment = forms.CharField(required=False, max_length=5000)
