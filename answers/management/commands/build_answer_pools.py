from django.contrib.auth.models import User

from answers.pools import answer_pool_build, answer_tasks_assign, cited_pool_build
from workbench.collections.services import ImportRefused
from workbench.management.base import Error, WorkbenchCommand

KINDS = ("cited", "nugget", "support")


class Command(WorkbenchCommand):
    help = ("Pool the answer runs: their cited segments for relevance judging (an ordinary pool, depth-k over the "
            "citations), the answers for nugget assignment, the citation pairs for support judging; optionally "
            "give the answer pools' topics to assessors.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--kind", action="append", choices=KINDS, help="Which pools (default: all three)")
        parser.add_argument("--run", action="append", metavar="TAG", help="Only these answer runs (default: "
                                                                            "every contributing one)")
        parser.add_argument("--depth", type=int, default=None, help="Cited pool: the first K cited segments "
                                                                      "of each answer (default: all)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--assessor", action="append", default=[], metavar="NAME",
                            help="Give the nugget and support pools' topics to these users")
        parser.add_argument("--overlap", type=int, default=1, help="Assessors per topic")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        if opts["depth"] is not None and opts["depth"] < 1:
            raise Error("--depth must be at least 1")
        assessors = []
        for name in opts["assessor"]:
            try:
                assessors.append(User.objects.get(username=name))
            except User.DoesNotExist:
                raise Error(f"no user {name!r}") from None
        try:
            self._build(collection, opts, assessors)
        except ValueError as exc:  # PoolRefused
            raise ImportRefused([str(exc)]) from None

    def _build(self, collection, opts, assessors):
        for kind in opts["kind"] or KINDS:
            if kind == "cited":
                s = cited_pool_build(collection=collection, depth=opts["depth"], tags=opts["run"], seed=opts["seed"])
                self.stdout.write(f"pool {s.pool.name!r} (cited segments): {s.added} added, {s.total} documents "
                                  f"on {s.topics} topics {s.runs_text()}")
                continue
            s = answer_pool_build(collection=collection, kind=kind, tags=opts["run"], seed=opts["seed"])
            self.stdout.write(f"answer pool {s.pool.name!r} ({kind}): {s.added} added, {s.total} items on "
                              f"{s.topics} topics")
            if assessors:
                made = answer_tasks_assign(pool=s.pool, assessors=assessors, overlap=opts["overlap"])
                self.stdout.write(f"  {made} topics given to {', '.join(a.username for a in assessors)}")
