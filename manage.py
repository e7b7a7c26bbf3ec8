#!/usr/bin/env python
"""Django's command-line utility for the workbench.

A command that needs neither Django nor a database says so in its own module with a module-level
``STANDALONE = "package.module:function"`` (``function(argv) -> exit code``, e.g. ``manage.py trec_eval``):
it is read from the command's file without importing it and run before Django starts (about 1 s less
start-up). Every other command, ``manage.py help`` and ``call_command`` go through Django as usual.
"""
import ast
import os
import sys
from importlib import import_module
from pathlib import Path


def standalone(name: str) -> str | None:
    """``STANDALONE`` of the command ``name`` (``"module:function"``), None when it has none or no such file."""
    if not name.isidentifier():
        return None
    for path in Path(__file__).resolve().parent.glob(f"*/management/commands/{name}.py"):
        for node in ast.parse(path.read_bytes()).body:
            if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["STANDALONE"]
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value
    return None


def main() -> None:
    # Arrow takes its buffers from the C library's malloc, not its bundled mimalloc (as the web server,
    # workbench/wsgi.py): about 25 MB less at peak for trec_eval on 5,000 topics. Arrow reads this when first
    # imported, so it is set before anything is.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    entry = standalone(sys.argv[1]) if len(sys.argv) > 1 else None
    if entry:
        module, function = entry.split(":")
        sys.exit(getattr(import_module(module), function)(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
