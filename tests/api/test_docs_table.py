"""The API's page in the docs lists every endpoint of the schema the server serves: the table is made from the
schema when the docs are built (docs/hooks/api.py), not copied into the page."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _hook():
    spec = importlib.util.spec_from_file_location("api_docs_hook", ROOT / "docs" / "hooks" / "api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_list_every_endpoint_the_server_serves(client):
    served = client.get("/api/v1/openapi.json").json()
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert page.count(_hook().PLACEHOLDER) == 1 and "| `GET` | `/api/v1/" not in page  # generated, not copied
    built = _hook().on_page_markdown(page, None, None, None)
    rows = {tuple(cell.strip(" `") for cell in line.split("|")[1:3]) for line in built.splitlines()
            if line.startswith("| `")}
    expected = {(method.upper(), path) for path, item in served["paths"].items() for method in item
                if method in ("get", "post", "put", "patch", "delete")}
    assert rows == expected and len(expected) >= 28
    assert f"{len(expected)} endpoints" in built
