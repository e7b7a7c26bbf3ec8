"""A whole deployment for end-to-end tests: migrate, an organizer, the web server and a ``db_worker``, each
its own process over one database (a SQLite file, or a fresh PostgreSQL database when ``DATABASE_URL``
names a PostgreSQL server), as an organizer runs it, with no immediate job backend anywhere."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stack:
    url: str
    env: dict
    log: Path
    worker: subprocess.Popen | None = None

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def _database(tmp: Path):
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        yield f"sqlite:///{tmp / 'track.sqlite3'}"
        return
    import psycopg

    name = f"e2e_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield base.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _wait_for(url: str, processes, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise RuntimeError(f"a process of the stack stopped:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(url, timeout=2)  # noqa: S310 - our own server
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the web server did not answer in {seconds} s:\n{log.read_text()[-3000:]}")


@contextmanager
def running_stack(tmp: Path, *, organizer: str, password: str):
    with _database(tmp) as database_url:
        env = {**os.environ, "DATABASE_URL": database_url, "WORKBENCH_VAR_DIR": str(tmp / "var"), "DEBUG": "1",
               "DJANGO_SUPERUSER_PASSWORD": password, "PYTHONUNBUFFERED": "1"}
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        log = tmp / "stack.log"
        stack = Stack(url="", env=env, log=log)
        stack.manage("migrate", "--noinput")
        stack.manage("createsuperuser", "--noinput", "--username", organizer, "--email", f"{organizer}@example.org")
        port = _free_port()
        with open(log, "w") as out:
            web = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                                   cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            worker = subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload", "--interval", "0.2",
                                       "--no-startup-delay"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            try:
                stack.url, stack.worker = f"http://127.0.0.1:{port}", worker
                _wait_for(f"{stack.url}/accounts/login/", [web, worker], log)
                yield stack
            finally:
                for process in (web, worker):
                    if process.poll() is None:
                        process.terminate()
                for process in (web, worker):
                    try:
                        process.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        process.kill()


def log_in_at(page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def accept_invitation(page, link: str, username: str, password: str) -> None:
    """Follow a set-password link, choose the password, then log in with it."""
    page.goto(link)
    page.get_by_label("New password").fill(password)
    page.get_by_label("The same again").fill(password)
    page.get_by_role("button", name="Set my password").click()
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
