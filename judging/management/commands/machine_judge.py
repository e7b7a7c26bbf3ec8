import time

from judging import machine
from judging.machine import JUDGES, JudgeKind
from judging.machine.base import JudgeError
from judging.machine_services import machine_job_for, machine_judge_ensure
from judging.tasks import machine_judge_now
from pooling.models import Pool
from workbench.formats.declarations import add_param_options
from workbench.formats.vocabulary import UnknownChoice
from workbench.management.base import Error, WorkbenchCommand
from workbench.models import Job


class Command(WorkbenchCommand):
    help = ("A machine assessor judges every pair of a pool (resumable: pairs it judged are never judged again). "
            "The openai judge talks to an endpoint the deployment declares (--endpoint, JUDGE_ENDPOINTS, with the "
            "key it names) or to --base-url with the key in OPENAI_API_KEY. Progress: a bar on a terminal, a line "
            "every 10% of the pairs otherwise.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judge", required=True, metavar="NAME",
                            help=f"The machine judge's name; a new one is created of --kind ({', '.join(JUDGES.names)})")
        parser.add_argument("--kind", default=None, help="The judge in the registry (default: the name if it is one, "
                                                         "else embedding)")
        parser.add_argument("--pool", default="main", help="Pool name (default: main)")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--endpoint", default=None, metavar="NAME",
                           help="openai: an endpoint the deployment declares in JUDGE_ENDPOINTS")
        where.add_argument("--base-url", default=None,
                           help="openai: any endpoint, e.g. http://127.0.0.1:8000/v1 (key from OPENAI_API_KEY)")
        parser.add_argument("--model", default=None, help="openai: the model name the endpoint serves")
        add_param_options(parser.add_argument_group("judge options"), machine.options())

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        pool = Pool.objects.filter(collection=collection, name=opts["pool"]).first()
        if pool is None:
            raise Error(f"collection {collection.slug!r} has no pool {opts['pool']!r} (build it with build_pool)")
        kind = opts["kind"] or (opts["judge"] if opts["judge"] in JUDGES else JUDGES.default)
        config = {"endpoint": opts["endpoint"], "base_url": opts["base_url"], "model": opts["model"]}
        try:
            config.update(_given_options(opts, JUDGES.get(kind)))
            judge = machine_judge_ensure(collection=collection, name=opts["judge"], kind=kind, config=config)
        except (JudgeError, UnknownChoice) as exc:
            raise Error(str(exc)) from None
        job, resumed = machine_job_for(judge=judge, pool=pool)
        if resumed:
            self.stdout.write(f"resuming job #{job.pk} ({job.done} of {job.total} pairs done when it stopped)")
        started = time.monotonic()
        with self.progress(None, "pair", "judging") as shown:
            machine_judge_now(job.pk, watch=shown.report)
        job.refresh_from_db()
        if job.status == Job.Status.FAILED:
            raise Error(f"machine judge {judge.name}: {job.error}")
        if not job.finished:  # split into parts (JOB_PARTS) that db_worker processes judge
            self.stdout.write(f"job #{job.pk}: {job.step}; db_worker processes finish it")
            return
        lines = (job.result or {}).get("lines", [])
        for line in lines[1:]:  # the failures first, then what it did, in one closing line
            self.stdout.write(line)
        if lines:
            self.stdout.write(f"{lines[0]}; {time.monotonic() - started:.1f} s")


def _given_options(opts: dict, kind: JudgeKind) -> dict:
    """The chosen judge's options the command was given, checked against its declaration (JudgeError: one line
    naming the option, the bound and the value, or an option another judge reads)."""
    for p, users in machine.options():
        if kind.name not in users and opts.get(p.name) is not None:
            raise JudgeError(f"{p.option} applies to {', '.join(users)}, not to {kind.name}")
    given = {p.name: opts[p.name] for p in kind.options if opts.get(p.name) is not None}
    kind.read(given, {p.name: p.option for p in kind.options})
    return given
