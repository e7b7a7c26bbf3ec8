"""``manage.py plan_budget SLUG [--planned N] [--per-hour R] [--cost-per-hour C] [--format text|json]``: how many
judgments the collection needs for a stable run ranking (Kendall's τ ≥ 0.9), with the judging hours (see
``evaluation.engine.budget``)."""

from __future__ import annotations

import json

from evaluation.planner import budget_plan, judging_cost
from workbench.management.base import Error, WorkbenchCommand


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


class Command(WorkbenchCommand):
    help = ("Plan the judging budget: from the judgments so far, subsample the pool depth and the topics, and "
            "predict how many judgments give a run ranking with Kendall's τ ≥ 0.9, and the hours they take.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--planned", type=int, help="The final number of judgments (default: the pools' size)")
        parser.add_argument("--per-hour", type=_positive,
                            help="Judgments per hour per assessor (default: the median measured on human judging)")
        parser.add_argument("--cost-per-hour", type=_positive, help="An assessor's cost per hour")
        parser.add_argument("--bootstrap", type=int, default=200, help="Topic resamples for the interval")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        if opts["planned"] is not None and opts["planned"] < 1:
            raise Error(f"--planned must be a positive number of judgments, not {opts['planned']}")
        plan = budget_plan(collection, planned=opts["planned"], bootstrap=max(0, opts["bootstrap"]))
        cost = judging_cost(collection, plan.more, per_hour=opts["per_hour"], cost_per_hour=opts["cost_per_hour"])
        if opts["format"] == "json":
            self.stdout.write(json.dumps({**plan.as_json(), "cost": cost}, indent=1))
            return
        if plan.judgments_to_tau is None:
            self.stdout.write(f"{plan.judgments:,} judgments: not enough to plan (needs judged relevant documents, "
                              "two runs and judgments at several pool depths)")
            return
        lo, hi = plan.interval or (None, None)
        self.stdout.write(f"{plan.judgments:,} judgments so far, {plan.planned:,} planned; ranking now vs final: "
                          f"τ ≈ {plan.tau_now:.3f}")
        self.stdout.write(f"judgments for τ ≥ {plan.target}: {plan.judgments_to_tau:,}"
                          + (f" (5-95%: {lo:,}-{hi:,})" if lo is not None else "")
                          + f"; {plan.more:,} more")
        if cost["measured"] and not cost["enough"]:
            self.stdout.write(f"not enough human judging yet to measure a rate: {cost['rated_on']:,} judgments "
                              "(give --per-hour)")
        if cost["hours"] is not None:
            rested = (f" (measured on {cost['rated_on']:,} judgments by {cost['assessors']} assessors)"
                      if cost["measured"] else "")
            self.stdout.write(f"at {cost['per_hour']} judgments per hour{rested}: {cost['hours']} assessor hours"
                              + (f" ({cost['hours_in_parallel']} h with {cost['assessors']} assessors)"
                                 if cost["hours_in_parallel"] is not None else "")
                              + (f", cost {cost['cost']:,}" if cost["cost"] is not None else ""))
        if plan.next_topics:
            self.stdout.write(f"topics to judge next: {', '.join(plan.next_topics)}")
