#!/usr/bin/env python
"""Django's command-line utility for the workbench."""
import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["trec_eval"]:
        # trec_eval needs no database and no Django: skip its start-up (the management command
        # evaluation/management/commands/trec_eval.py runs the same function under call_command).
        # Arrow takes its buffers from the C library's malloc, not its bundled mimalloc: about 25 MB less
        # at peak on 5,000 topics. Arrow reads this when first imported, so it is set before the import.
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
        from evaluation.engine.cli import main as trec_eval

        sys.exit(trec_eval(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
