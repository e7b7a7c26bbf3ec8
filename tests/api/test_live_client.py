"""The docs' Python client (docs/api.md) against a real HTTP server: a participant submits a run and reads its
receipt, the organizer fetches the qrels as TREC text, with requests over a socket as a script would."""

from __future__ import annotations

import pytest
import requests

from judging.models import Judgment
from tests import factories
from tests.api.conftest import bearer
from workbench.people import collection_organizer_add

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_documented_python_client_submits_a_run_and_fetches_qrels(live_server, track, teams, organizer):
    _, red = teams["red"]
    collection_organizer_add(collection=track.collection, user=organizer)
    Judgment.objects.create(collection=track.collection, topic=track.collection.topics.get(qid="302"), docno="d4",
                            grade=1, assessor="nist", source=Judgment.Source.IMPORT)
    wb = f"{live_server.url}/api/v1"
    session = requests.Session()
    session.headers["Authorization"] = bearer(red)["HTTP_AUTHORIZATION"]
    run = factories.run_lines("red-bm25", {"301": ["d1", "d2", "d3"], "302": ["d4", "d5", "d6"]}).encode()
    receipt = session.post(f"{wb}/tracks/{track.collection.slug}/submissions", files={"file": ("bm25.run", run)},
                           data={"description": "BM25, k1=0.9", "run_type": "automatic", "priority": 1},
                           timeout=60).json()
    again = session.get(f"{wb}/tracks/{track.collection.slug}/submissions/{receipt['id']}", timeout=60).json()
    assert again == receipt and receipt["status"] == "accepted" and receipt["tag"] == "red-bm25"
    assert receipt["warnings"] == ["bm25.run: no results for 1 of 3 topics (303); they score 0"]
    session.headers["Authorization"] = bearer(organizer)["HTTP_AUTHORIZATION"]
    qrels = session.get(f"{wb}/collections/{track.collection.slug}/qrels.txt", params={"policy": "majority"},
                        timeout=60)
    assert qrels.status_code == 200 and qrels.text == "302 0 d4 1\n"
