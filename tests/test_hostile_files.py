"""Files made to take the service down are refused with one line, in bounded memory, wherever they come in:
gzip bombs (1 GB of zeros in a 1 MB upload) for every kind through the CLI, the console's upload jobs and
the portal's check job; a YAML alias bomb in a run's ir_metadata header; one 1 GB document. The files are
generated here, streaming (never held whole, never committed); each entry point runs as its own process
whose peak memory (``ru_maxrss`` from ``os.wait4``) must stay under 500 MB. The 10 GB bombs are in
``tests/benchmarks/bench_hostile_files.py`` (``make bench``)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from workbench.formats import FormatError, iter_documents, limits, read_qrels, read_run, read_topics

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
GB = 1 << 30
MB = 1 << 20
PEAK_LIMIT_MB = 500


def gzip_zeros(path: Path, size: int) -> Path:
    """A gzip file of ``size`` zero bytes, compressed block by block (1 GB is about 1 MB)."""
    block = b"\0" * MB
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as out:
        for _ in range(size // MB):
            out.write(block)
    return path


def one_huge_document(path: Path, size: int, fmt: str) -> Path:
    """A documents file whose second document is ``size`` bytes of text, written block by block."""
    line = b"words words words words words words words words words words words words words words.\n"
    block = line * (MB // len(line))
    with open(path, "wb") as out:
        if fmt == "trec":
            out.write(b"<DOC>\n<DOCNO> small </DOCNO>\nfine\n</DOC>\n<DOC>\n<DOCNO> HUGE-1 </DOCNO>\n<TEXT>\n")
        else:
            out.write(b'{"docno": "small", "text": "fine"}\n{"docno": "HUGE-1", "text": "')
            block = block.replace(b"\n", b" ")
        for _ in range(size // len(block)):
            out.write(block)
        out.write(b"</TEXT>\n</DOC>\n" if fmt == "trec" else b'"}\n')
    return path


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    return gzip_zeros(tmp_path_factory.mktemp("bombs") / "bomb.gz", GB)


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> dict:
    """A migrated SQLite database the subprocesses share, with a collection holding one topic."""
    tmp = tmp_path_factory.mktemp("hostile")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "WORKBENCH_VAR_DIR": str(tmp / "var"),
           "TASKS_BACKEND": "django_tasks.backends.immediate.ImmediateBackend", "PYTHONUNBUFFERED": "1"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    for args in (["migrate", "--noinput"], ["create_collection", "c"]):
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    return {"env": env, "tmp": tmp}


#: Linux carries a process's peak RSS across fork and exec (the forked copy of a parent's pages counts), so a
#: command started straight from a pytest worker that has grown to 700 MB "peaks" at 700 MB. A small launcher
#: process forks the command instead and reports the command's own ``ru_maxrss`` (from ``os.wait4``).
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured(args: list[str], env: dict) -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, peak memory in MB) of ``manage.py ARGS`` run as its own process."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        done = subprocess.run([sys.executable, "-c", LAUNCHER, peak.name, sys.executable, "manage.py", *args],
                              cwd=ROOT, env=env, stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        return done.returncode, out.read(), err.read(), int(peak.read()) / 1024


def _refused_in_one_line(code: int, err: str, peak: float, *expected: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0, err
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    assert all(text in lines[0] for text in expected), lines[0]
    assert peak < PEAK_LIMIT_MB, f"peak {peak:.0f} MB"


@pytest.mark.parametrize("command", ["import_runs", "import_qrels", "import_topics", "import_documents"])
def test_a_1gb_gzip_bomb_is_refused_in_one_line_by_every_import_command(stack, bomb, command):
    code, _, err, peak = measured([command, "c", str(bomb)], stack["env"])
    _refused_in_one_line(code, err, peak, "bomb.gz", "expands more than 100 times")


JOBS = """
import json
from pathlib import Path
import shutil
from django.conf import settings
from workbench import tasks
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job
c = Collection.objects.get(slug="c")
found = {{}}
for kind, task in (("runs", tasks.import_runs), ("topics", tasks.import_topics), ("documents", tasks.import_documents)):
    folder = Path(settings.VAR_DIR) / "uploads" / ("upload-" + kind)  # where the console stages uploads
    folder.mkdir(parents=True)
    shutil.copy("{bomb}", folder / ("my-" + kind + ".gz"))
    job = jobs.job_start(task, kind=kind + " import", collection=c, params={{"directory": str(folder)}})
    job.refresh_from_db()
    found[kind] = {{"status": job.status, "error": job.error, "left": folder.exists()}}
print(json.dumps(found))
"""


def test_a_1gb_gzip_bomb_uploaded_in_the_console_fails_its_job_in_one_line(stack, bomb):
    code, out, err, peak = measured(["shell", "-c", JOBS.format(tmp=stack["tmp"], bomb=bomb)], stack["env"])
    assert code == 0, err
    found = json.loads(out.strip().splitlines()[-1])
    for kind, job in found.items():
        assert job["status"] == "failed", (kind, job)
        assert job["error"].startswith(f"my-{kind}.gz: refused: it expands more than 100 times"), (kind, job)
        assert "\n" not in job["error"] and not job["left"], (kind, job)
    assert peak < PEAK_LIMIT_MB, f"peak {peak:.0f} MB"


PORTAL = """
import json, shutil
from pathlib import Path
from django.contrib.auth.models import User
from participation.models import Submission, Team, Track
from participation.services import submission_receive
from participation.tasks import check_submission
from workbench.models import Collection
from workbench.collections import files as store
from django.core.files.uploadedfile import SimpleUploadedFile
c = Collection.objects.get(slug="c")
track, _ = Track.objects.get_or_create(collection=c, defaults={{"open": True, "require_description": False}})
team, _ = Team.objects.get_or_create(track=track, name="red")
user = User.objects.create_user("rosa-{n}", password="pw-rosa-1")
team.members.add(user)
staged = Path("{tmp}") / "portal-{n}"
staged.mkdir()
shutil.copy("{bomb}", staged / "{name}")

class Upload:
    name = "{name}"
    def temporary_file_path(self):
        return str(staged / "{name}")
    def close(self):
        pass

submission = submission_receive(team=team, user=user, upload=Upload(), task=check_submission)
submission.refresh_from_db()
submission.job.refresh_from_db()
print(json.dumps({{"status": submission.status, "problems": submission.problems, "job": submission.job.status,
                  "error": submission.job.error, "kept": store.exists(submission.stored)}}))
"""


def test_a_1gb_gzip_bomb_submitted_in_the_portal_is_refused_in_one_line(stack, bomb):
    code, out, err, peak = measured(["shell", "-c", PORTAL.format(tmp=stack["tmp"], bomb=bomb, n=1, name="bomb.run.gz")],
                                    stack["env"])
    assert code == 0, err
    found = json.loads(out.strip().splitlines()[-1])
    assert found["status"] == "refused" and found["job"] == "done", found
    assert len(found["problems"]) == 1 and "bomb.run.gz: refused: it expands more than 100 times" in found["problems"][0]
    assert not found["kept"], found
    assert peak < PEAK_LIMIT_MB, f"peak {peak:.0f} MB"


@pytest.mark.parametrize("fmt", ["trec", "jsonl"])
def test_a_1gb_document_is_refused_in_one_line_naming_it(stack, tmp_path, fmt):
    path = one_huge_document(tmp_path / f"huge.{fmt}", GB, fmt)
    code, _, err, peak = measured(["import_documents", "c", str(path)], stack["env"])
    _refused_in_one_line(code, err, peak, f"huge.{fmt}:", "'HUGE-1'", "larger than 16 MB")
    path.unlink()


ALIAS_BOMB = ("# ir_metadata.start\n# a: &a [x,x,x,x,x,x,x,x,x,x]\n# b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
              "# c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n# d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
              "# e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n# f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
              "# g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n# ir_metadata.end\n301 Q0 d1 1 2.0 red-a\n")


def test_a_yaml_alias_bomb_in_the_run_header_is_refused_in_one_line(tmp_path):
    path = tmp_path / "bomb.run"
    path.write_text(ALIAS_BOMB)
    with pytest.raises(FormatError) as refused:
        read_run(path)
    assert refused.value.problems == [f"{path}:2: the ir_metadata header uses a YAML alias (*name), which is not "
                                      "accepted: write the value out"]


def test_a_header_too_deep_or_too_large_is_refused(tmp_path):
    deep = tmp_path / "deep.run"
    deep.write_text("# ir_metadata.start\n# a: " + "[" * 30 + "]" * 30 + "\n# ir_metadata.end\n1 Q0 d 1 1 t\n")
    with pytest.raises(FormatError, match="nested deeper than 20 levels"):
        read_run(deep)
    large = tmp_path / "large.run"
    large.write_text("# ir_metadata.start\n" + "# note: " + "x" * 100_000 + "\n# ir_metadata.end\n1 Q0 d 1 1 t\n")
    with pytest.raises(FormatError, match="larger than 64 KB"):
        read_run(large)


@pytest.fixture
def small_limits():
    limits.configure(max_bytes={"runs": MB, "qrels": MB, "topics": MB, "documents": MB})
    yield
    from workbench import settings

    settings._configure_file_limits()


@pytest.mark.parametrize(("read", "kind"), [(read_run, "runs"), (read_qrels, "qrels"), (read_topics, "topics"),
                                            (lambda p: list(iter_documents(p)), "documents")])
def test_a_file_larger_than_its_kinds_limit_is_refused_plain_or_compressed(tmp_path, small_limits, read, kind):
    text = "".join(f"{i} Q0 doc{i * 7919 % 100003} {i} {1 / i:.6f} tag\n" for i in range(1, 40_000)).encode()
    plain = tmp_path / "big.txt"
    plain.write_bytes(text)
    packed = tmp_path / "big.gz"
    packed.write_bytes(gzip.compress(text))
    for path, said in ((plain, f"{plain}: refused: it holds more than 1 MB, the limit for {kind} files"),
                       (packed, f"{packed}: refused: it holds more than 1 MB once decompressed, the limit for {kind} "
                                "files")):
        with pytest.raises(FormatError) as refused:
            read(path)
        assert refused.value.problems == [said]


def test_real_compressed_files_pass_the_ratio_limit(tmp_path):
    """A run of 200,000 lines at gzip level 9, checked for its ratio from its first MB: real files compress 5 to
    15 times, far below the limit (bench_hostile_files.py imports a 1,000,000-line run under the defaults)."""
    path = tmp_path / "real.run.gz"
    with gzip.open(path, "wt", compresslevel=9) as out:
        for topic in range(200):
            out.writelines(f"{topic} Q0 doc{(topic * 1000 + r) * 7919 % 10_000_019} {r + 1} {1000 - r} mine\n"
                           for r in range(1000))
    limits.configure(ratio_after=MB)
    try:
        run = read_run(path)
    finally:
        from workbench import settings

        settings._configure_file_limits()
    assert len(run.frame) == 200_000
