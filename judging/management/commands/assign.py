from django.contrib.auth.models import User

from judging.assignments import AssignmentRefused, assignments_create
from pooling.models import Pool
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Assign a pool's documents to assessors, balanced by reading effort. With --overlap K each "
            "document is judged independently by K of the named assessors.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--assessor", action="append", required=True, dest="assessors", metavar="NAME",
                            help="An assessor's user name (repeat for several)")
        parser.add_argument("--topics", nargs="+", default=None, metavar="QID")
        parser.add_argument("--overlap", type=int, default=1)
        parser.add_argument("--batch-size", type=int, default=None,
                            help="Assign batches of this many documents instead of whole topics")
        parser.add_argument("--pool", default="main", help="Pool name (default: main)")
        parser.add_argument("--create-users", action="store_true",
                            help="Create missing assessor accounts (with unusable passwords)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        pool = Pool.objects.filter(collection=collection, name=opts["pool"]).first()
        if pool is None:
            raise Error(f"collection {collection.slug!r} has no pool {opts['pool']!r} (build it with build_pool)")
        users = []
        for name in opts["assessors"]:
            user = User.objects.filter(username=name).first()
            if user is None and opts["create_users"]:
                user = User.objects.create_user(name)
            if user is None:
                raise Error(f"no user {name!r} (create it, or pass --create-users)")
            users.append(user)
        try:
            summary = assignments_create(pool=pool, assessors=users, topics=opts["topics"], overlap=opts["overlap"],
                                         batch_size=opts["batch_size"])
        except AssignmentRefused as exc:
            raise Error(str(exc)) from None
        self.stdout.write(f"assigned {summary.documents} documents ({summary.items} judgments to make) in "
                          f"pool {pool}")
        for name, figures in summary.per_assessor.items():
            self.stdout.write(f"  {name}: {figures['items']} documents, about {figures['effort']:,} words")
