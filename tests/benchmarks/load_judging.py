"""Load test: 20 assessors judging at once on PostgreSQL through gunicorn lose no judgment.

Builds a collection with a pool on a fresh PostgreSQL database, assigns it to 20 assessors, starts
gunicorn on 127.0.0.1, and runs 20 client threads (one per assessor) that log in and judge as fast as
they can for a bounded time, some posts sent twice (double submits) and some from a second "tab".
Then every post the server accepted (a redirect) must be in the database and in the exported qrels
with the grade that assessor gave last.

Run: .venv/bin/python tests/benchmarks/load_judging.py [--seconds 30] [--assessors 20]
Traffic goes to 127.0.0.1 only; every loop is bounded in time and count.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DB_NAME = "bench_load_judging"
PORT = 8797
BASE = f"http://127.0.0.1:{PORT}"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Assessor:
    def __init__(self, name: str):
        self.name = name
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)
        self.accepted: list[tuple[str, str, int]] = []  # (token, docno, grade)
        self.latencies: list[float] = []
        self.errors = 0

    def request(self, path: str, data: dict | None = None) -> tuple[int, str, str]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(BASE + path, data=body, headers={"Referer": BASE + path})
        try:
            with self.opener.open(req, timeout=30) as response:
                return response.status, response.headers.get("Location", ""), response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Location", ""), exc.read().decode(errors="replace")

    def csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def log_in(self) -> None:
        self.request("/accounts/login/")
        status, location, _ = self.request("/accounts/login/", {
            "username": self.name, "password": "pw", "csrfmiddlewaretoken": self.csrf()})
        assert status == 302, f"{self.name} could not log in ({status})"

    def judge_for(self, seconds: float, rng: random.Random) -> None:
        deadline = time.monotonic() + seconds
        status, location, _ = self.request("/judge/next/")
        n = 0
        while time.monotonic() < deadline and n < 10_000 and location.startswith("/judge/item/"):
            status, _, page = self.request(location)
            token = re.search(r'name="client_token" value="([^"]+)"', page).group(1)
            docno = re.search(r'id="doc-label">Document ([^,<]+),', page).group(1)
            grade = rng.choice([0, 1, 2])
            form = {"grade": str(grade), "client_token": token, "csrfmiddlewaretoken": self.csrf(),
                    "time_spent_ms": str(rng.randint(1000, 9000))}
            start = time.perf_counter()
            status, following, _ = self.request(location, form)
            self.latencies.append(time.perf_counter() - start)
            if status == 302:
                self.accepted.append((token, docno, grade))
                if rng.random() < 0.1:  # a double submit: same token again
                    again, _, _ = self.request(location, form)
                    assert again == 302
                if rng.random() < 0.05:  # a second tab revises the same document
                    _, _, page2 = self.request(location)
                    token2 = re.search(r'name="client_token" value="([^"]+)"', page2).group(1)
                    grade2 = rng.choice([0, 1, 2])
                    s2, _, _ = self.request(location, {**form, "grade": str(grade2), "client_token": token2})
                    if s2 == 302:
                        self.accepted.append((token2, docno, grade2))
            else:
                self.errors += 1
                following = "/judge/next/"
                status, following, _ = self.request(following)
            location = following
            n += 1


def run(cmd, env, **kwargs):
    return subprocess.run(cmd, cwd=ROOT, env=env, check=True, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--assessors", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc", f"drop database if exists {DB_NAME}"],
                   capture_output=True)
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc", f"create database {DB_NAME}"],
                   check=True, capture_output=True)
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DB_NAME}", "SECRET_KEY": "load-test",
           "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1"}
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        run([py, "manage.py", "migrate", "-v0"], env)
        run([py, "manage.py", "create_collection", "load", "--grades", "0=No,1=Yes,2=Very"], env, capture_output=True)
        topics = tmp / "topics.tsv"
        topics.write_text("".join(f"{q}\tquery {q}\n" for q in range(1, 41)))
        run([py, "manage.py", "import_topics", "load", str(topics)], env, capture_output=True)
        rng = random.Random(1)
        for r in range(5):
            lines = [f"{q} Q0 D{q}-{rng.randint(0, 400)} {k} {100 - k} run{r}" for q in range(1, 41) for k in range(1, 51)]
            seen, unique = set(), []
            for line in lines:
                key = tuple(line.split()[:3:2])
                if key not in seen:
                    seen.add(key)
                    unique.append(line)
            (tmp / f"run{r}.txt").write_text("\n".join(unique) + "\n")
        run([py, "manage.py", "import_runs", "load", *[str(tmp / f"run{r}.txt") for r in range(5)]], env,
            capture_output=True)
        run([py, "manage.py", "build_pool", "load", "--depth", "50", "--seed", "1"], env, capture_output=True)
        names = [f"loader{i:02d}" for i in range(args.assessors)]
        code = ("from django.contrib.auth.models import User\n"
                f"for n in {names!r}:\n    User.objects.create_user(n, password='pw')\n")
        run([py, "manage.py", "shell", "-v", "0", "-c", code], env)
        run([py, "manage.py", "assign", "load", *[a for n in names for a in ("--assessor", n)]], env,
            capture_output=True)
        server = subprocess.Popen([str(Path(py).parent / "gunicorn"), "workbench.wsgi", "--workers", str(args.workers),
                                   "--bind", f"127.0.0.1:{PORT}", "--log-level", "warning"], cwd=ROOT, env=env)
        try:
            for _ in range(50):
                try:
                    urllib.request.urlopen(BASE + "/accounts/login/", timeout=2)
                    break
                except OSError:
                    time.sleep(0.2)
            assessors = [Assessor(n) for n in names]
            for a in assessors:
                a.log_in()
            threads = [threading.Thread(target=a.judge_for, args=(args.seconds, random.Random(i)))
                       for i, a in enumerate(assessors)]
            start = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=args.seconds + 120)
            elapsed = time.perf_counter() - start
        finally:
            server.terminate()
            server.wait(timeout=30)
        # every accepted post is in the database, and each assessor's last grade is in their qrels
        check = (
            "import json\nfrom judging.models import Judgment\n"
            "print(json.dumps(list(Judgment.objects.values_list('client_token', 'assessor', 'grade'))))")
        out = subprocess.run([py, "manage.py", "shell", "-v", "0", "-c", check], cwd=ROOT, env=env, capture_output=True,
                             text=True, check=True).stdout
        import json

        stored = {token: (assessor, grade) for token, assessor, grade in json.loads(out)}
        accepted = [(a.name, token, docno, grade) for a in assessors for token, docno, grade in a.accepted]
        last_grade = {}
        for name, _, docno, grade in accepted:
            last_grade[(name, docno)] = grade
        # a post whose grade equals the current one adds no record (nothing changed); every other
        # accepted post must be stored under its own token
        unstored = [x for x in accepted if x[1] not in stored]
        lost = []
        exported_ok = 0
        for name in names:
            text = subprocess.run([py, "manage.py", "export_qrels", "load", "--assessor", name], cwd=ROOT, env=env,
                                  capture_output=True, text=True, check=True).stdout
            exported = {line.split()[2]: int(line.split()[3]) for line in text.splitlines()}
            mine = {docno: grade for (n, docno), grade in last_grade.items() if n == name}
            lost.extend((name, d, g) for d, g in mine.items() if exported.get(d) != g)
            exported_ok += len(exported) == len(mine)
        latencies = [x for a in assessors for x in a.latencies]
        print("| assessors | seconds | accepted posts | posts/s | median post (ms) | p95 post (ms) | "
              "same-grade repeats | lost | exports complete |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        p95 = sorted(latencies)[int(0.95 * (len(latencies) - 1))] * 1000 if latencies else float("nan")
        print(f"| {args.assessors} | {elapsed:.0f} | {len(accepted)} | {len(accepted) / elapsed:.0f} | "
              f"{statistics.median(latencies) * 1000:.0f} | {p95:.0f} | {len(unstored)} | {len(lost)} | "
              f"{exported_ok}/{len(names)} |")
        errors = sum(a.errors for a in assessors)
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc", f"drop database {DB_NAME}"],
                       capture_output=True)
        if lost or errors or exported_ok != len(names):
            sys.exit(f"FAILED: {len(lost)} accepted judgments lost, {errors} refused posts, "
                     f"{len(names) - exported_ok} incomplete exports")


if __name__ == "__main__":
    main()
