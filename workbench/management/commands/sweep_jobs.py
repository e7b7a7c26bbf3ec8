from workbench.jobs import lifecycle as jobs
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Settle the jobs whose worker died (no heartbeat for JOB_STALE_AFTER_SECONDS): retry once those "
            "safe to retry, mark the others failed with their task rows, remove their staged files. "
            "Every db_worker does this at start-up and every minute.")

    def handle(self, *args, **opts):
        settled = jobs.sweep_dead_jobs()
        for job_id, what in settled:
            self.stdout.write(f"job {job_id}: {what}")
        self.stdout.write(f"{len(settled)} dead job{'s' if len(settled) != 1 else ''} settled")
