"""MkDocs hook: the rooms of each app (its sub-packages) with what each holds, read from the packages'
own docstrings at build time (``ast``, nothing imported); the table replaces the line ``<!-- rooms -->``.
A sub-package added to an app shows here without a change to the docs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "<!-- rooms -->"
APPS = ("workbench", "pooling", "judging", "evaluation", "answers", "participation")
NOT_ROOMS = {"migrations", "management", "templatetags", "static", "__pycache__"}


def _about(package: Path) -> str:
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    first = first.split(". ")[0].rstrip(".") + "." if first else "–"  # its first sentence
    return re.sub(r":(?:func|class|data|mod):`~?([^`]+)`", r"`\1`", first.replace("``", "`")).replace("|", "\\|")


def rooms() -> list[tuple[str, str, int]]:
    """(package, the first paragraph of its docstring, its modules) for every sub-package of every app."""
    found = []
    for app in APPS:
        for package in sorted(p for p in (ROOT / app).iterdir() if (p / "__init__.py").exists()):
            if package.name not in NOT_ROOMS:
                found.append((f"{app}.{package.name}", _about(package), len(list(package.rglob("*.py")))))
    return found


def rooms_table(found: list[tuple[str, str, int]]) -> str:
    return ("| package | modules | what it holds |\n|---|---:|---|\n"
            + "\n".join(f"| `{name}` | {count} | {about} |" for name, about, count in found) + "\n")


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, rooms_table(rooms()))
