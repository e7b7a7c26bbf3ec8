"""A collection opened for participation (a track): teams of participant accounts submit runs within a
window, each checked by the same checker as the CLI; organizers pool from the submissions and release the
results back to each team."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from workbench.models import Collection, Job, Run

team_name_validator = RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                                     "Letters, digits, '.', '-' and '_' (it starts the team's run tags).")


class Track(models.Model):
    class Leaderboard(models.TextChoices):
        HIDDEN = "hidden", "Hidden: each team sees only its own runs"
        ANONYMOUS = "anonymous", "Anonymous: other teams' runs without their names"
        NAMED = "named", "Named: every run with its team"

    collection = models.OneToOneField(Collection, on_delete=models.CASCADE, related_name="track")
    open = models.BooleanField(default=False, help_text="Teams may submit while the window is open.")
    opens_at = models.DateTimeField(null=True, blank=True, help_text="Empty: as soon as the track is open.")
    closes_at = models.DateTimeField(null=True, blank=True, help_text="The deadline (empty: none).")
    max_runs_per_team = models.PositiveIntegerField(default=5, validators=[MinValueValidator(1)])
    pooled_runs_per_team = models.PositiveIntegerField(
        default=1, validators=[MinValueValidator(1)],
        help_text="How many of each team's runs are pooled, by the team's own priority.")
    depth = models.PositiveIntegerField(default=1000, validators=[MinValueValidator(1)],
                                        help_text="Documents asked for per topic (fewer gives a warning).")
    require_description = models.BooleanField(default=True, help_text="A run must say how it was made.")
    topics_published = models.BooleanField(
        default=False, db_default=False, verbose_name="Topics published",
        help_text="Teams may download the topics now. Without this they may from the moment submissions open.")
    results_released = models.BooleanField(default=False)
    released_at = models.DateTimeField(null=True, blank=True)
    leaderboard = models.CharField(max_length=16, choices=Leaderboard.choices, default=Leaderboard.HIDDEN,
                                   help_text="What teams see of the other teams' runs once results are released.")

    def __str__(self) -> str:
        return f"track {self.collection.slug}"

    def window(self, now=None) -> tuple[bool, str]:
        """(may submit now, why not / until when) as a participant reads it."""
        now = now or timezone.now()
        if not self.open:
            return False, "the track is not open for submissions"
        if self.opens_at and now < self.opens_at:
            return False, f"submissions open on {self.opens_at:%Y-%m-%d %H:%M} UTC"
        if self.closes_at and now >= self.closes_at:
            return False, f"the deadline passed on {self.closes_at:%Y-%m-%d %H:%M} UTC"
        return True, f"open until {self.closes_at:%Y-%m-%d %H:%M} UTC" if self.closes_at else "open"

    def topics_available(self, now=None) -> tuple[bool, str]:
        """(teams may download the topics now, why not): once the organizer publishes them, or from the
        moment submissions open (the track open and its opening time passed); after the deadline too."""
        now = now or timezone.now()
        if self.topics_published:
            return True, "published by the organizers"
        if self.open and (self.opens_at is None or now >= self.opens_at):
            return True, "submissions are open"
        if self.open:
            return False, f"the topics are published when submissions open, on {self.opens_at:%Y-%m-%d %H:%M} UTC"
        return False, "the topics are published when the track opens for submissions"


class Team(models.Model):
    track = models.ForeignKey(Track, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=40, validators=[team_name_validator],
                            help_text="Short name, used as the runs' team.")
    display_name = models.CharField(max_length=200, blank=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["track", "name"]
        constraints = [models.UniqueConstraint(fields=["track", "name"], name="team_unique_name")]

    def __str__(self) -> str:
        return self.name


class Submission(models.Model):
    class Status(models.TextChoices):
        CHECKING = "checking", "Being checked"
        ACCEPTED = "accepted", "Accepted"
        REFUSED = "refused", "Refused"
        REPLACED = "replaced", "Replaced by a later submission"

    class RunType(models.TextChoices):
        AUTOMATIC = "automatic", "Automatic"
        MANUAL = "manual", "Manual (a person in the loop)"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="submissions")
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                     related_name="submissions")
    submitted_at = models.DateTimeField(auto_now_add=True)
    file_name = models.CharField(max_length=255)
    stored = models.CharField(max_length=500, help_text="The kept file (every submission's file is kept).")
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField(default=0)
    tag = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CHECKING)
    problems = models.JSONField(default=list, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    run_type = models.CharField(max_length=16, choices=RunType.choices, default=RunType.AUTOMATIC)
    fields_used = models.JSONField(default=list, blank=True, help_text="Topic fields the run used.")
    description = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True, help_text="The run file's ir_metadata header, if any.")
    priority = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)],
                                           help_text="The team's ranking of its runs for pooling: 1 first.")
    replaces = models.CharField(max_length=200, blank=True, default="", db_default="",
                                help_text="The run tag this submission was sent to replace (empty: a new run or "
                                          "whichever run has the file's tag).")
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="submissions")

    class Meta:
        ordering = ["-submitted_at", "-id"]

    def __str__(self) -> str:
        return f"{self.team} {self.tag or self.file_name} ({self.status})"
