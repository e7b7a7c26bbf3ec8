"""A whole deployment for end-to-end tests: migrate, an organizer, the web server and a ``db_worker``, each
its own process over one database (a SQLite file, or a fresh PostgreSQL database when ``DATABASE_URL``
names a PostgreSQL server), as an organizer runs it, with no immediate job backend anywhere.

The web server is Django's development server (DEBUG=1, what ``make demo`` runs) or, with
``server="gunicorn"``, gunicorn with one sync worker as a real deployment runs it: DEBUG=0, a SECRET_KEY,
ALLOWED_HOSTS, ``collectstatic`` (the workbench serves its static files itself, with WhiteNoise).
:meth:`Stack.peak_memory` reads the peak resident memory (VmHWM) of the web worker and of the db_worker."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
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
    web: subprocess.Popen | None = None
    server: str = "runserver"

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def web_pid(self) -> int:
        """The process that answers requests: gunicorn's worker (the master's child), or the development server."""
        assert self.web is not None and self.web.poll() is None, "the web server is not running"
        if self.server != "gunicorn":
            return self.web.pid
        children = _children(self.web.pid)
        assert len(children) == 1, f"gunicorn {self.web.pid} has workers {children}, not one"
        return children[0]

    def peak_memory(self) -> dict[str, int]:
        """Peak resident memory in bytes (VmHWM, read from /proc) of the web worker and of the db_worker
        (with its children, if it has any): read it before the stack stops."""
        assert self.worker is not None and self.worker.poll() is None, "the db_worker is not running"
        return {"web": vm_hwm(self.web_pid()),
                "db_worker": max([vm_hwm(self.worker.pid), *map(vm_hwm, _children(self.worker.pid))])}

    def status_of(self, path: str) -> int:
        """The HTTP status the web server itself answers for ``path`` (no browser, no login)."""
        try:
            with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as response:  # noqa: S310 - our own server
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code


def vm_hwm(pid: int) -> int:
    """A live process's peak resident set size in bytes (``VmHWM`` of ``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            value, unit = line.split()[1:3]
            assert unit == "kB", line
            return int(value) * 1024
    raise AssertionError(f"/proc/{pid}/status has no VmHWM")


def _children(pid: int) -> list[int]:
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    return children


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


def _web_command(server: str, port: int, gunicorn_args: Sequence[str] = ()) -> list[str]:
    if server == "gunicorn":
        # as the README's deployment runs it, with one worker so that its memory is the web server's (and
        # no control socket: the default one, in the home directory, would be shared by concurrent stacks)
        return [sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "1", "--bind", f"127.0.0.1:{port}",
                "--access-logfile", "-", "--no-control-socket", *gunicorn_args]
    assert server == "runserver", f"no web server {server!r}: runserver or gunicorn"
    return [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]


@contextmanager
def running_stack(tmp: Path, *, organizer: str, password: str, server: str = "runserver", env: dict | None = None,
                  gunicorn_args: Sequence[str] = ()):
    """The stack over a fresh database; ``server`` is ``runserver`` (DEBUG=1) or ``gunicorn`` (DEBUG=0, as
    deployed, with ``gunicorn_args`` added to its command line); ``env`` adds settings for every process."""
    with _database(tmp) as database_url:
        env = {**os.environ, "DATABASE_URL": database_url, "WORKBENCH_VAR_DIR": str(tmp / "var"), "DEBUG": "1",
               "DJANGO_SUPERUSER_PASSWORD": password, "PYTHONUNBUFFERED": "1", **(env or {})}
        if server == "gunicorn":
            env.update(DEBUG="0", SECRET_KEY=f"e2e-{uuid.uuid4().hex}-{uuid.uuid4().hex}",
                       ALLOWED_HOSTS="127.0.0.1,localhost")
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        log = tmp / "stack.log"
        stack = Stack(url="", env=env, log=log, server=server)
        stack.manage("migrate", "--noinput")
        stack.manage("createsuperuser", "--noinput", "--username", organizer, "--email", f"{organizer}@example.org")
        if server == "gunicorn":
            stack.manage("collectstatic", "--noinput")
        port = _free_port()
        with open(log, "w") as out:
            web = subprocess.Popen(_web_command(server, port, gunicorn_args), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            worker = subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload", "--interval", "0.2",
                                       "--no-startup-delay"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            try:
                stack.url, stack.worker, stack.web = f"http://127.0.0.1:{port}", worker, web
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
