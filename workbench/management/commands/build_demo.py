from workbench.demo.install import DEMO_PASSWORD, demo_build
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Build the demo collection and its users (kept as they are if they already exist)."

    def handle(self, *args, **opts):
        report = demo_build()
        for line in report.lines:
            self.stdout.write(line)
        self.stdout.write(f"users: {', '.join(report.users)} (password: {DEMO_PASSWORD!r})")
