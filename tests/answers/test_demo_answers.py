"""`make demo` has a small answer track every role can try: answer runs, nugget banks, assignments, scores."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from answers.models import AnswerRun, AnswerTask, NuggetAssignment, NuggetBank
from answers.scores import answer_scores, run_means


@pytest.mark.slow
def test_the_demo_has_answer_runs_banks_assignments_and_an_answer_leaderboard(db, client):
    out = StringIO()
    call_command("build_demo", stdout=out)
    assert "answer runs: bm25-title, bm25-desc, tfidf-desc, closed-book on topics 1-14" in out.getvalue()
    runs = {r.tag: r for r in AnswerRun.objects.filter(collection__slug="demo")}
    assert runs["bm25-title"].kind == "both" and runs["closed-book"].kind == "answer"
    assert runs["bm25-title"].num_topics == 14 and runs["closed-book"].num_citations == 0
    assert NuggetBank.objects.filter(collection__slug="demo").count() == 8
    assert NuggetAssignment.objects.filter(collection__slug="demo", assessor="organizer").exists()
    means = run_means(answer_scores(runs["bm25-title"].collection)).set_index("run")
    assert means.loc["closed-book", "all_score"] == 0.0 < means.loc["bm25-title", "all_score"]
    assert {t.assessor.username for t in AnswerTask.objects.filter(topic__qid="7")} == {"assessor", "assessor2"}
    client.force_login(authenticate(username="researcher", password="demo"))
    page = client.get("/answers/demo/leaderboard/").content.decode()
    assert "closed-book" in page and "Strict vital" in page
    assert 'href="/answers/demo/leaderboard/"' in client.get("/collections/demo/").content.decode()
