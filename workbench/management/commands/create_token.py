from django.contrib.auth.models import User

from workbench.access.tokens import token_create
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Make a personal API token for an account and print it alone on stdout (it is shown only now: "
            "only its hash is kept). Send it as 'Authorization: Bearer TOKEN' to /api/v1/.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="What the token is for (shown on the account page)")

    def handle(self, *args, **opts):
        user = User.objects.filter(username=opts["username"]).first()
        if user is None:
            raise Error(f"no account {opts['username']!r}")
        if not user.is_active:
            raise Error(f"account {opts['username']!r} is deactivated")
        _, token = token_create(user=user, name=opts["name"] or "create_token")
        self.stdout.write(token)
