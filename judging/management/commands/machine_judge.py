from judging.machine import JUDGES
from judging.machine.base import JudgeError
from judging.machine_services import machine_job_for, machine_judge_ensure
from judging.tasks import machine_judge
from pooling.models import Pool
from workbench.formats.vocabulary import UnknownChoice
from workbench.management.base import Error, WorkbenchCommand
from workbench.models import Job


class Command(WorkbenchCommand):
    help = ("A machine assessor judges every pair of a pool (resumable: pairs it judged are never judged again). "
            "The openai judge reads its key from OPENAI_API_KEY.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judge", required=True, metavar="NAME",
                            help=f"The machine judge's name; a new one is created of --kind ({', '.join(JUDGES.names)})")
        parser.add_argument("--kind", default=None, help="The judge in the registry (default: the name if it is one, "
                                                         "else embedding)")
        parser.add_argument("--pool", default="main", help="Pool name (default: main)")
        parser.add_argument("--base-url", default=None, help="openai: the endpoint, e.g. http://127.0.0.1:8000/v1")
        parser.add_argument("--model", default=None, help="openai: the model name the endpoint serves")
        parser.add_argument("--samples", type=int, default=None, help="openai: answers per pair (majority vote)")
        parser.add_argument("--concurrency", type=int, default=None, help="openai: requests at once (default 4)")
        parser.add_argument("--timeout", type=float, default=None, help="openai: seconds per request (default 60)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        pool = Pool.objects.filter(collection=collection, name=opts["pool"]).first()
        if pool is None:
            raise Error(f"collection {collection.slug!r} has no pool {opts['pool']!r} (build it with build_pool)")
        kind = opts["kind"] or (opts["judge"] if opts["judge"] in JUDGES else JUDGES.default)
        config = {"base_url": opts["base_url"], "model": opts["model"], "samples": opts["samples"],
                  "concurrency": opts["concurrency"], "timeout": opts["timeout"]}
        try:
            judge = machine_judge_ensure(collection=collection, name=opts["judge"], kind=kind, config=config)
        except (JudgeError, UnknownChoice) as exc:
            raise Error(str(exc)) from None
        job, resumed = machine_job_for(judge=judge, pool=pool)
        if resumed:
            self.stdout.write(f"resuming job #{job.pk} ({job.done} of {job.total} pairs done when it stopped)")
        machine_judge.call(job.pk)
        job.refresh_from_db()
        if job.status == Job.Status.FAILED:
            raise Error(f"machine judge {judge.name}: {job.error}")
        if not job.finished:  # split into parts (JOB_PARTS) that db_worker processes judge
            self.stdout.write(f"job #{job.pk}: {job.step}; db_worker processes finish it")
        for line in (job.result or {}).get("lines", []):
            self.stdout.write(line)
