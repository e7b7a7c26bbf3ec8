from django.contrib.auth.models import User
from django.db import transaction

from workbench.access.people import collection_organizer_add
from workbench.collections.services import collection_create, parse_scale
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Create a test collection with its relevance scale."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--description", default="")
        parser.add_argument("--grades", default=None,
                            help='Relevance scale, e.g. "0=Not relevant,1=Relevant,2=Highly relevant" '
                                 "(default: binary 0/1)")
        parser.add_argument("--relevant-from", type=int, default=None,
                            help="Lowest grade that counts as relevant (default: the lowest positive grade)")
        parser.add_argument("--max-depth", type=int, default=1000,
                            help="Most documents a run may return per topic (default 1000)")
        parser.add_argument("--organizer", action="append", default=[], metavar="USERNAME",
                            help="An organizer of the collection (an account with the organizer role; repeat for "
                                 "more). Without it, every organizer manages the collection.")

    def handle(self, *args, **opts):
        scale = parse_scale(opts["grades"]) if opts["grades"] else None
        organizers = []
        for username in opts["organizer"]:
            user = User.objects.filter(username=username).first()
            if user is None:
                raise Error(f"no account {username!r} (invite it on the People page first)")
            organizers.append(user)
        with transaction.atomic():
            collection = collection_create(slug=opts["slug"], name=opts["name"], scale=scale,
                                           relevant_from=opts["relevant_from"], max_depth=opts["max_depth"],
                                           description=opts["description"])
            for user in organizers:
                collection_organizer_add(collection=collection, user=user)
        labels = ", ".join(f"{g}={label}" for g, label in collection.grade_labels.items())
        self.stdout.write(f"created collection {collection.slug!r}: grades {labels}; "
                          f"relevant from {collection.relevant_from}; organizers: "
                          + (", ".join(u.username for u in organizers) or "none (every organizer manages it)"))
