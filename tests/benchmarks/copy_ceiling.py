"""PostgreSQL's own ceiling for the split pool build (``bench_split_jobs.py --jobs pool``), with no workbench code:
the pool's entries copied into an empty table like theirs from one session, then from two at once."""

from __future__ import annotations

import time


def copy_ceiling(pool) -> str:
    """PostgreSQL's own scaling on this machine, with no workbench code: the pool's entries copied (``COPY``, as
    the build writes them) into an empty table like the entries' (same columns, identity, indexes and checks),
    from one session, then by the two parts' topics from two sessions at once. Twice each, alternating."""
    import threading

    import psycopg
    from django.db import connection

    from pooling.models import PoolEntry
    from workbench.formats.ids import sorted_topics

    qids = sorted_topics(pool.collection.topics.values_list("qid", flat=True))
    ids = dict(pool.collection.topics.values_list("qid", "pk"))
    halves = [[ids[q] for q in qids[:len(qids) // 2]], [ids[q] for q in qids[len(qids) // 2:]]]
    table = PoolEntry._meta.db_table
    columns = ", ".join(f.column for f in PoolEntry._meta.concrete_fields if not f.primary_key)
    params = connection.get_connection_params()  # the benchmark's own database
    with psycopg.connect(**params, autocommit=True) as conn:
        payloads = []
        for topics in halves:  # in the order the build writes them: topic, then docno
            with conn.cursor().copy(f"COPY (SELECT {columns} FROM {table} WHERE pool_id = {pool.pk} AND "
                                    f"topic_id = ANY(ARRAY{topics}::bigint[]) ORDER BY topic_id, docno) TO STDOUT") as copy:
                payloads.append(b"".join(bytes(chunk) for chunk in copy))
        conn.execute(f"CREATE TABLE bench_copy (LIKE {table} INCLUDING ALL)")
        try:
            timings: dict[int, list[float]] = {1: [], 2: []}
            for sessions in (1, 2, 1, 2):
                conn.execute("TRUNCATE bench_copy RESTART IDENTITY")
                chunks = [b"".join(payloads)] if sessions == 1 else payloads
                threads = [threading.Thread(target=_copy_into, args=(params, columns, data)) for data in chunks]
                start = time.perf_counter()
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                timings[sessions].append(time.perf_counter() - start)
        finally:
            conn.execute("DROP TABLE bench_copy")
    entries = sum(payload.count(b"\n") for payload in payloads)
    return (f"PostgreSQL alone (no workbench code): `COPY` of the pool's {entries:,} entries into an empty table "
            f"like theirs, from one session {' and '.join(f'{t:.1f}' for t in timings[1])} s, from two sessions "
            f"at once (half the topics each) {' and '.join(f'{t:.1f}' for t in timings[2])} s: ratio "
            f"{' and '.join(f'{b / a:.2f}' for a, b in zip(timings[1], timings[2], strict=True))}")


def _copy_into(params: dict, columns: str, data: bytes) -> None:
    import psycopg

    with psycopg.connect(**params) as conn, conn.cursor().copy(f"COPY bench_copy ({columns}) FROM STDIN") as copy:
        copy.write(data)
