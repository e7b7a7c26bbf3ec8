"""Benchmark: hostile files are refused in bounded memory, real files of real size still import.

- a 10 GB gzip bomb (zeros, about 10 MB compressed) through ``import_runs``, ``import_qrels``,
  ``import_topics`` and ``import_documents``: each refused with one line; target peak under 500 MB;
- a 1 GB single document (plain TREC SGML): refused with one line naming it; target peak under 500 MB;
- real sizes under the default limits: a 1,000,000-line run (gzip), a 300 MB documents file (JSONL);
- archives as a runs upload's job unpacks them: a 5 GiB member zipped into 5 MB (refused after 16 MB written),
  a zip of 100,000 entries (refused before anything is unpacked), 20,000 members of one name (named in linear
  time, with ``UPLOAD_MAX_FILES`` raised to 30,000).

Each command runs as its own process on a fresh SQLite file; its peak memory is its ``ru_maxrss``.

Run: .venv/bin/python tests/benchmarks/bench_hostile_files.py [--gb 10]
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MB = 1 << 20


def measured(args, env):
    with tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return process.returncode, err.read().strip(), usage.ru_maxrss / 1024, time.perf_counter() - started


ARCHIVES = """
import json, os, shutil, sys, time, zipfile
from pathlib import Path
from workbench.collections import uploads
from workbench.collections.services import ImportRefused
tmp, mb = Path(sys.argv[-1]), 1 << 20
def written():
    return int(dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())["wchar"])
def make(name, members):
    with zipfile.ZipFile(tmp / name, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, size, text in members:
            with archive.open(member, "w", force_zip64=True) as out:
                for _ in range(size // mb):
                    out.write(bytes(mb))
                out.write(text)
    return tmp / name
cases = [("5 GiB member in a zip", make("bomb.zip", [("big.run", 5 << 30, b"")])),
         ("zip of 100,000 entries", make("many.zip", [(f"r/{i}.run", 0, b"1 Q0 d 1 1 r\\n") for i in range(100_000)])),
         ("zip of 20,000 members named a.run", make("same.zip", [(f"f{i}/a.run", 0, b"1 Q0 d 1 1 a\\n") for i in range(20_000)]))]
for label, archive in cases:
    folder = tmp / ("staged-" + archive.stem)
    folder.mkdir()
    shutil.move(archive, folder / archive.name)
    (folder / ".names.json").write_text(json.dumps({"files": [[archive.name, archive.name]]}))
    size, before, started = (folder / archive.name).stat().st_size, written(), time.perf_counter()
    try:
        said = f"unpacked {len(uploads.open_staged(folder, archives=True, kind='runs'))} files"
    except ImportRefused as exc:
        said = exc.problems[0]
    print(f"| {label} ({size / mb:.1f} MB) | {(written() - before) / mb:.0f} | {time.perf_counter() - started:.1f} | "
          f"{said[:110]} |")
    shutil.rmtree(folder)
"""


def archives(tmp: Path, env: dict) -> None:
    """The archive cases, in one process of the workbench (a job's unpacking, as a console upload's)."""
    print("\n| archive | MB written | seconds | message |\n|---|---|---|---|")
    subprocess.run([sys.executable, "manage.py", "shell", "-c", ARCHIVES.replace("sys.argv[-1]", repr(str(tmp)))],
                   cwd=ROOT, env={**env, "UPLOAD_MAX_FILES": "30000"}, check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=int, default=10)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "WORKBENCH_VAR_DIR": str(tmp / "var")}
        for args in (["migrate", "--noinput"], ["create_collection", "c"]):
            subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)
        bomb = tmp / "bomb.gz"
        block = b"\0" * MB
        with open(bomb, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as out:
            for _ in range(options.gb * 1024):
                out.write(block)
        print("| case | exit | peak MB | seconds | message |\n|---|---|---|---|---|")
        worst = 0.0
        for command in ("import_runs", "import_qrels", "import_topics", "import_documents"):
            code, err, peak, seconds = measured([command, "c", str(bomb)], env)
            worst = max(worst, peak)
            print(f"| {command} {options.gb} GB bomb ({bomb.stat().st_size / MB:.0f} MB) | {code} | {peak:.0f} | "
                  f"{seconds:.1f} | {err[:110]} |")
        huge = tmp / "huge.sgml"
        line = b"words words words words words words words words words words words words.\n"
        with open(huge, "wb") as out:
            out.write(b"<DOC>\n<DOCNO> HUGE-1 </DOCNO>\n<TEXT>\n")
            chunk = line * (MB // len(line))
            for _ in range(1024):
                out.write(chunk)
            out.write(b"</TEXT>\n</DOC>\n")
        code, err, peak, seconds = measured(["import_documents", "c", str(huge)], env)
        worst = max(worst, peak)
        print(f"| import_documents, one 1 GB document | {code} | {peak:.0f} | {seconds:.1f} | {err[:110]} |")
        huge.unlink()
        run = tmp / "real.run.gz"
        with gzip.open(run, "wt") as out:
            for topic in range(1, 1001):
                out.writelines(f"{topic} Q0 doc{(topic * 1000 + r) * 7919 % 10_000_019} {r + 1} {1000 - r} real\n"
                               for r in range(1000))
        subprocess.run([sys.executable, "manage.py", "shell", "-c", "from workbench.models import Collection, Topic;"
                        "c = Collection.objects.get(slug='c'); Topic.objects.bulk_create("
                        "Topic(collection=c, qid=str(q), title='t') for q in range(1, 1001))"],
                       cwd=ROOT, env=env, check=True)
        code, err, peak, seconds = measured(["import_runs", "c", str(run)], env)
        print(f"| import_runs, 1,000,000-line run (gzip) | {code} | {peak:.0f} | {seconds:.1f} | {err[:110]} |")
        assert code == 0, err
        docs = tmp / "docs.jsonl"
        text = " ".join(f"word{i}" for i in range(400))
        with open(docs, "w") as out:
            i = 0
            while out.tell() < 300 * MB:
                out.write(f'{{"docno": "D{i}", "text": "{text}"}}\n')
                i += 1
        code, err, peak, seconds = measured(["import_documents", "c", str(docs)], env)
        print(f"| import_documents, 300 MB JSONL ({i:,} documents) | {code} | {peak:.0f} | {seconds:.1f} | {err[:110]} |")
        assert code == 0, err
        archives(tmp, env)
        if worst >= 500:
            sys.exit(f"a hostile file took {worst:.0f} MB, over the 500 MB target")


if __name__ == "__main__":
    main()
