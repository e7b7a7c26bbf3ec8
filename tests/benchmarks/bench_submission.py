"""Benchmark: a participant uploads a 1,000,000-line run through the portal (gunicorn, one sync worker, and
a db_worker, on a fresh SQLite file); target: accepted in under 15 s end to end (upload, check, store), and
the web worker's memory growing by less than 200 MB (the upload is streamed to disk, never held whole).

Run: .venv/bin/python tests/benchmarks/bench_submission.py [--lines 1000000]
Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import http.client
import http.cookiejar
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PORT = 8798
BASE = f"http://127.0.0.1:{PORT}"

SETUP = """
from django.contrib.auth.models import Group, User
from participation.models import Team, Track
from workbench.models import Collection, Topic
from workbench.collections.services import collection_create
c = collection_create(slug="bench", name="Bench")
Topic.objects.bulk_create(Topic(collection=c, qid=str(q), title=f"topic {q}") for q in range(1, {topics} + 1))
track = Track.objects.create(collection=c, open=True, max_runs_per_team=5, depth=1000, require_description=False)
u = User.objects.create_user("pat", password="bench-pass-1")
u.groups.add(Group.objects.get_or_create(name="participants")[0])
Team.objects.create(track=track, name="bench").members.add(u)
"""


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _write_run(path: Path, topics: int, depth: int) -> None:
    with open(path, "w") as out:
        for q in range(1, topics + 1):
            out.write("".join(f"{q} Q0 doc{q}-{r} {r} {1000 - r}.5 bench-run\n" for r in range(1, depth + 1)))


def _session(jar):
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{BASE}/accounts/login/", timeout=30).read()
    token = next(c.value for c in jar if c.name == "csrftoken")
    data = urllib.parse.urlencode({"username": "pat", "password": "bench-pass-1", "csrfmiddlewaretoken": token})
    opener.open(urllib.request.Request(f"{BASE}/accounts/login/", data=data.encode(),
                                       headers={"Referer": f"{BASE}/accounts/login/"}), timeout=30).read()
    return opener, next(c.value for c in jar if c.name == "csrftoken")


def _upload(jar, token: str, path: Path) -> str:
    """Stream the file as multipart/form-data (no copy in memory); the Location of the answer."""
    boundary = "----bench" + os.urandom(8).hex()
    fields = {"csrfmiddlewaretoken": token, "run_type": "automatic", "description": "bench", "priority": "1"}
    head = "".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
                   for k, v in fields.items())
    head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
             "Content-Type: text/plain\r\n\r\n")
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = len(head.encode()) + path.stat().st_size + len(tail)
    cookies = "; ".join(f"{c.name}={c.value}" for c in jar)
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    conn.putrequest("POST", "/participate/bench/")
    for name, value in {"Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(size),
                        "Cookie": cookies, "Referer": f"{BASE}/participate/bench/"}.items():
        conn.putheader(name, value)
    conn.endheaders()
    conn.send(head.encode())
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            conn.send(chunk)
    conn.send(tail)
    response = conn.getresponse()
    response.read()
    if response.status != 302:
        sys.exit(f"the upload answered {response.status}")
    return response.getheader("Location")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    depth = 1000
    topics = max(1, args.lines // depth)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}", "WORKBENCH_VAR_DIR": str(tmp),
               "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1", "SECRET_KEY": "bench-" + "x" * 50}
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
        subprocess.run([*manage, "shell", "-c", SETUP.replace("{topics}", str(topics))], env=env, check=True,
                       cwd=ROOT)
        run = tmp / "bench.run"
        _write_run(run, topics, depth)
        print(f"run file: {topics * depth:,} lines, {run.stat().st_size / 1e6:.1f} MB", flush=True)
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "1", "--bind",
                                f"127.0.0.1:{PORT}", "--timeout", "120"], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        worker = subprocess.Popen([*manage, "db_worker", "--no-reload", "--interval", "0.1", "--no-startup-delay"],
                                  env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            jar = http.cookiejar.CookieJar()
            for _ in range(200):
                try:
                    opener, token = _session(jar)
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                sys.exit("the web server did not start")
            children = Path(f"/proc/{web.pid}/task/{web.pid}/children").read_text().split()
            worker_pid = int(children[0])
            before, peak, stop = _rss_mb(worker_pid), [0.0], threading.Event()

            def sample() -> None:
                while not stop.is_set():
                    peak[0] = max(peak[0], _rss_mb(worker_pid))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            clock = time.perf_counter()
            receipt = _upload(jar, token, run)
            uploaded = time.perf_counter() - clock
            while True:
                page = opener.open(BASE + receipt, timeout=30).read().decode()
                if "Being checked" not in page.split("<h1>")[1].split("</h1>")[0]:
                    break
                time.sleep(0.1)
            total = time.perf_counter() - clock
            stop.set()
            sampler.join()
            verdict = re.search(r"<h1>Receipt #\d+: ([^<]+)</h1>", page).group(1)
            team_page = opener.open(f"{BASE}/participate/bench/", timeout=30).read().decode()
            stored = re.search(r"<td>bench-run</td><td>\d+</td><td>(\d+)</td>", team_page)
            lines = int(stored.group(1)) if stored else 0
            print("| step | figure |\n|---|---:|")
            print(f"| upload answered (file streamed to disk, job queued) | {uploaded:.2f} s |")
            print(f"| accepted, end to end (upload + check + store) | **{total:.2f} s** (target < 15 s) |")
            print(f"| web worker's memory: before / peak / growth | {before:.0f} / {peak[0]:.0f} / "
                  f"**{peak[0] - before:.0f} MB** (target < 200 MB) |")
            print(f"| verdict | {verdict}, {lines:,} lines stored |")
            if verdict != "Accepted" or lines != topics * depth or total >= 15 or peak[0] - before >= 200:
                sys.exit("target missed")
        finally:
            for process in (web, worker):
                process.terminate()
                process.wait(timeout=20)


if __name__ == "__main__":
    main()
