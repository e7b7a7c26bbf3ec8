"""``manage.py trec_eval [-q] [-c] [-J] [-n] [-l N] [-M N] [-m MEASURE]... QRELS RUN``: trec_eval 9.0.8.

Thin: the arguments go untouched to :func:`evaluation.engine.cli.main` (options, output and exit codes are
trec_eval's; see that module). Works without a database: nothing here touches it, and ``manage.py trec_eval``
runs :data:`STANDALONE` before Django starts (see manage.py); this class serves ``call_command`` and ``help``.
"""

from __future__ import annotations

import argparse
import sys

from django.core.management.base import BaseCommand, CommandError

#: run by manage.py without starting Django: ``function(argv) -> exit code``
STANDALONE = "evaluation.engine.cli:main"


class Command(BaseCommand):
    help = "Evaluate a TREC run against qrels exactly like trec_eval 9.0.8 (same options and output)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def run_from_argv(self, argv: list[str]) -> None:
        from evaluation.engine.cli import main

        sys.stdout.flush()
        code = main(argv[2:], sys.stdout, sys.stderr)
        sys.stdout.flush()
        sys.exit(code)

    def create_parser(self, prog_name: str, subcommand: str, **kwargs) -> argparse.ArgumentParser:
        """For ``call_command``: every argument goes to trec_eval's own parser, untouched."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        defaults = vars(parser.parse_args([]))

        def parse_args(args=None, namespace=None):
            return argparse.Namespace(**{**defaults, "args": list(args or [])})

        parser.parse_args = parse_args
        return parser

    def handle(self, *args, **options) -> None:
        from evaluation.engine.cli import main

        code = main([str(a) for a in args], self.stdout, self.stderr)
        if code:
            raise CommandError(f"trec_eval exited with status {code}", returncode=code)
