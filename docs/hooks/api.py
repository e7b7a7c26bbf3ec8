"""MkDocs hook: the HTTP API's endpoints, from its OpenAPI schema at build time.

The schema is the one the server serves at ``/api/v1/openapi.json`` (``workbench.api.v1``), exported by
django-ninja's ``manage.py export_openapi_schema`` in a process of its own (this build needs no database);
each endpoint's method, path, summary, parameters and answers replace the line ``<!-- api-endpoints -->``
of a page. An endpoint added to an app's ``api.py`` shows here without a change to the docs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "<!-- api-endpoints -->"
_METHODS = ("get", "post", "put", "patch", "delete")


def api_schema() -> dict:
    """The API's OpenAPI schema, as the server gives it."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings"}
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), "export_openapi_schema", "--api", "workbench.api.v1.api"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the API's schema could not be exported: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def _cell(text) -> str:
    return " ".join(str(text).replace("|", "\\|").split()) or "–"


def _parameters(operation: dict) -> str:
    names = [f"`{p['name']}`" + ("" if p.get("required") else "?") for p in operation.get("parameters", [])
             if p.get("in") == "query"]
    body = operation.get("requestBody", {}).get("content", {})
    if body:
        names.append("body: " + ", ".join(f"`{kind}`" for kind in body))
    return ", ".join(names) or "–"


def endpoints_table(schema: dict) -> str:
    """One row per endpoint, grouped by its tag (who it serves), in the schema's order."""
    by_tag: dict[str, list[str]] = {}
    for path, item in schema.get("paths", {}).items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            answers = ", ".join(sorted(operation.get("responses", {})))
            row = (f"| `{method.upper()}` | `{path}` | "
                   f"{_cell(operation.get('summary', ''))} | {_parameters(operation)} | {answers} |")
            by_tag.setdefault((operation.get("tags") or ["other"])[0], []).append(row)
    parts = [f"Version {schema.get('info', {}).get('version', '?')}: {sum(map(len, by_tag.values()))} endpoints, "
             "from the schema the server serves at `/api/v1/openapi.json`.\n"]
    for tag, rows in by_tag.items():
        parts.append(f"\n### {tag.capitalize()}\n\n| Method | Path | What | Query and body | Answers |\n"
                     "|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    return "".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, endpoints_table(api_schema()))
