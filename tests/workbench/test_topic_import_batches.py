"""Topic imports ask the database in batches: more topics than SQLite allows variables in one statement
import, and import again with ``--replace``, instead of failing with "too many SQL variables". The limit is
lowered to SQLite's historical 999 here so that a few thousand topics show it (1,000,000 topics passed a
Debian build's 250,000 before)."""

from __future__ import annotations

import sqlite3

import pytest
from django.db import connection

from workbench.collections.services import collection_create, documents_import, topics_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def historical_limit():
    """SQLite's historical 999 variables on this test's connection, put back afterwards: the connection outlives
    the test, and the next test in the process would otherwise run under the lowered limit."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's limit on variables")
    connection.ensure_connection()
    before = connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    connection.features.__dict__.pop("max_query_params", None)  # Django reads the limit once per connection
    yield
    connection.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, before)
    connection.features.__dict__.pop("max_query_params", None)


def test_more_topics_than_sqlite_variables_import_and_replace(tmp_path, historical_limit):
    path = tmp_path / "topics.tsv"
    path.write_text("".join(f"q{i}\ttopic number {i}\n" for i in range(3_000)))
    collection = collection_create(slug="many", name="Many")
    assert topics_import(collection=collection, source=path).created == 3_000
    path.write_text("".join(f"q{i}\ttopic {i}, reworded\n" for i in range(3_000)))
    summary = topics_import(collection=collection, source=path, replace=True)
    assert (summary.created, summary.updated) == (0, 3_000)
    assert collection.topics.get(qid="q2999").title == "topic 2999, reworded"


def test_more_documents_than_sqlite_variables_import_and_replace(tmp_path, historical_limit):
    """The check for documents already there asks in batches too (it failed with "too many SQL variables")."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(f'{{"docno": "D{i}", "text": "words {i}"}}\n' for i in range(3_000)))
    collection = collection_create(slug="many-docs", name="Many documents")
    assert documents_import(collection=collection, sources=[path]).created == 3_000
    path.write_text("".join(f'{{"docno": "D{i}", "text": "other words {i}"}}\n' for i in range(3_000)))
    documents_import(collection=collection, sources=[path], replace=True)
    assert collection.documents.get(docno="D2999").text == "other words 2999"
