import pytest

from pooling.models import Pool, PoolEntry
from tests import factories


@pytest.fixture
def pool(db):
    """Collection 'robust' with topics 301-303, documents d1..d6, and a pool: 301 -> d1..d4, 302 -> d5, d6."""
    collection = factories.collection_with_topics(grades=[{"grade": 0, "label": "Not relevant"},
                                                          {"grade": 1, "label": "Relevant"},
                                                          {"grade": 2, "label": "Highly relevant"}])
    factories.add_documents(collection, [f"d{i}" for i in range(1, 7)])
    pool = Pool.objects.create(collection=collection, name="main", strategy="depth", params={"depth": 10})
    topics = {t.qid: t for t in collection.topics.all()}
    layout = {"301": ["d3", "d1", "d4", "d2"], "302": ["d6", "d5"]}
    for qid, docs in layout.items():
        for order, docno in enumerate(docs, start=1):
            PoolEntry.objects.create(pool=pool, topic=topics[qid], docno=docno, judging_order=order,
                                     pool_rank=int(docno[1:]), min_depth=int(docno[1:]))
    return pool
