"""A small answer track for the answers' judging tests: topic 301 with two answers of two runs (their sentences
citing segments with text), a bank of three nuggets, a nugget pool and a support pool, both given to ``assessor``."""

from __future__ import annotations

from answers.models import (
    Answer,
    AnswerPool,
    AnswerPoolItem,
    AnswerRun,
    AnswerSentence,
    AnswerTask,
    Nugget,
    NuggetBank,
)
from tests import factories
from workbench.models import Document, Topic

SEGMENTS = {"s1": "The Salk vaccine, an inactivated polio vaccine, was licensed in 1955.",
            "s2": "Poliomyelitis is caused by the poliovirus, spread by the faecal-oral route.",
            "s3": "Oral polio vaccine was developed by Albert Sabin."}
NUGGETS = [("Polio is caused by the poliovirus", "vital"), ("Salk's vaccine was licensed in 1955", "vital"),
           ("Sabin developed an oral vaccine", "okay")]


def answer_track(assessor, slug: str = "rag"):
    collection = factories.collection_with_topics(slug=slug)
    topic = Topic.objects.get(collection=collection, qid="301")
    topic.title = "polio vaccines"
    topic.save(update_fields=["title"])
    for docno, text in SEGMENTS.items():
        Document.objects.create(collection=collection, docno=docno, text=text, length=len(text.split()))
    answers = []
    for tag, sentences in (("secret-run-a", [("Polio is caused by a virus.", ["s2"]),
                                             ("Jonas Salk's vaccine came in 1955.", ["s1", "s3"])]),
                           ("secret-run-b", [("Polio vaccines exist.", ["s3"])])):
        run = AnswerRun.objects.create(collection=collection, tag=tag, team="t")
        cited = list(dict.fromkeys(c for _, cs in sentences for c in cs))
        answer = Answer.objects.create(run=run, topic=topic, cited=cited, num_sentences=len(sentences))
        for position, (text, citations) in enumerate(sentences):
            AnswerSentence.objects.create(answer=answer, position=position, text=text, citations=citations)
        answers.append(answer)
    bank = NuggetBank.objects.create(collection=collection, topic=topic, version=1, query=topic.title)
    for order, (text, importance) in enumerate(NUGGETS):
        Nugget.objects.create(bank=bank, order=order, text=text, importance=importance)
    nuggets = AnswerPool.objects.create(collection=collection, name="nuggets", kind="nugget")
    support = AnswerPool.objects.create(collection=collection, name="support", kind="support")
    order = 0
    for answer in answers:
        AnswerPoolItem.objects.create(pool=nuggets, topic=topic, answer=answer, judging_order=answer.pk)
        for sentence in answer.sentences.order_by("position"):
            for docno in sentence.citations:
                order += 1
                AnswerPoolItem.objects.create(pool=support, topic=topic, answer=answer, sentence=sentence,
                                              docno=docno, judging_order=order)
    if assessor is not None:
        AnswerTask.objects.create(pool=nuggets, topic=topic, assessor=assessor)
        AnswerTask.objects.create(pool=support, topic=topic, assessor=assessor)
    return collection, bank, answers
