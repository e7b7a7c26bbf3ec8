#!/usr/bin/env python
"""Django's command-line utility for the workbench.

A command that needs no database and no app says so in its own module, with a module-level ``STANDALONE``
read from the command's file without importing it:

- ``STANDALONE = "package.module:function"``: ``function(argv) -> exit code`` runs, Django is not even imported
  (``manage.py trec_eval``);
- ``STANDALONE = True``: the module's ``Command`` runs as Django runs it (same options, help and errors) but
  without ``django.setup()``: no app, model or registry is loaded (the file-only commands such as ``curves``).

Either saves the whole of Django's start-up (every app's models and registries). Every other command,
``manage.py help`` and ``call_command`` go through Django as usual.
"""
import ast
import os
import sys
from importlib import import_module


def standalone(name: str) -> str | None:
    """What runs the command ``name`` without Django's start-up: ``"module:function"``, or ``"module:Command"``
    for ``STANDALONE = True``; None when its module declares neither (or there is no such command)."""
    if not name.isidentifier():
        return None
    root = os.path.dirname(os.path.realpath(__file__))  # os.path, not pathlib: this runs before every command
    for app in sorted(os.listdir(root)):
        path = os.path.join(root, app, "management", "commands", f"{name}.py")
        if app.startswith(".") or not os.path.isfile(path):
            continue
        with open(path, "rb") as handle:
            body = ast.parse(handle.read()).body
        for node in body:
            if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["STANDALONE"]
                    and isinstance(node.value, ast.Constant) and node.value.value not in (None, False)):
                value = node.value.value
                return value if isinstance(value, str) else f"{app}.management.commands.{name}:Command"
    return None


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    # Arrow takes its buffers from the C library's malloc, not its bundled mimalloc (as the web server,
    # workbench/wsgi.py), in every command and in db_worker's jobs: about 25 MB less at peak for trec_eval on
    # 5,000 topics, 40 MB less for an import of 92,000 nugget assignments. Arrow reads this when first imported,
    # so it is set before anything is.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    entry = standalone(sys.argv[1]) if len(sys.argv) > 1 else None
    if entry:
        # One BLAS thread: numpy's OpenBLAS starts a thread per core when imported (a third of numpy's import
        # time, 0.08 s of CPU against 0.12 s here), which these commands never use: no kernel of theirs calls
        # BLAS on arrays large enough to be split among threads. An explicit setting wins.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        module, name = entry.split(":")
        runs = getattr(import_module(module), name)
        if isinstance(runs, type):  # a Django command: its own parser, output and errors, no app loaded
            runs().run_from_argv(sys.argv)
            sys.exit(0)
        sys.exit(runs(sys.argv[2:]))
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    try:
        try:
            main()
        finally:
            sys.stdout.flush()  # a closed pipe shows here at the latest, while it can still be caught
    except BrokenPipeError:
        # the reader went away (``manage.py diversity ... | head``): stop quietly, as Unix tools do, instead of
        # a traceback; stdout goes to /dev/null so the interpreter's last flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)  # 128 + SIGPIPE, what a shell reports for a tool stopped by a closed pipe
