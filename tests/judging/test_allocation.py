"""Allocation of pooled documents to assessors (judging.allocation, Django-free), figures computed by hand."""

from judging.allocation import PER_DOCUMENT_EFFORT, UNKNOWN_DOCUMENT_LENGTH, allocate, effort


def test_effort_is_words_plus_a_fixed_cost_per_document_and_a_default_for_unknown_texts():
    assert effort(["a", "b"], {"a": 100}) == 100 + UNKNOWN_DOCUMENT_LENGTH + 2 * PER_DOCUMENT_EFFORT


def test_the_largest_topics_go_first_each_to_the_least_loaded_assessor():
    # efforts 500, 400, 300 over two assessors: 500 -> ann, 400 -> bob, 300 -> bob (400 < 500): loads 500 / 700
    pieces = allocate([("t1", "a", 1), ("t2", "b", 1), ("t3", "c", 1)], holders={},
                      lengths={"a": 450, "b": 350, "c": 250}, load={"ann": 0, "bob": 0})
    assert [(p.topic, p.assessor, p.effort) for p in pieces] == [("t1", "ann", 500), ("t2", "bob", 400),
                                                                 ("t3", "bob", 300)]


def test_work_already_held_counts_towards_an_assessors_load():
    pieces = allocate([("t1", "a", 1)], holders={}, lengths={"a": 50}, load={"ann": 1000, "bob": 10})
    assert [p.assessor for p in pieces] == ["bob"]


def test_with_overlap_two_each_document_goes_to_two_different_assessors():
    pieces = allocate([("t1", "a", 1), ("t1", "b", 2)], holders={}, lengths={"a": 50, "b": 50},
                      load={"ann": 0, "bob": 0, "cy": 0}, overlap=2)
    assert [(p.assessor, p.docs) for p in pieces] == [("ann", (("a", 1), ("b", 2))), ("bob", (("a", 1), ("b", 2)))]


def test_documents_held_by_enough_assessors_are_skipped_and_holders_are_not_chosen_again():
    pieces = allocate([("t1", "a", 1), ("t1", "b", 2)], holders={("t1", "a"): {"ann"}},
                      lengths={}, load={"ann": 0, "bob": 0}, overlap=1)
    assert [(p.assessor, p.docs) for p in pieces] == [("ann", (("b", 2),))]
    pieces = allocate([("t1", "a", 1), ("t1", "b", 2)], holders={("t1", "a"): {"ann"}},
                      lengths={}, load={"ann": 0, "bob": 5}, overlap=2)
    # ann holds "a", so she is not a candidate for the unit: only bob takes it
    assert [(p.assessor, p.docs) for p in pieces] == [("bob", (("a", 1), ("b", 2)))]


def test_batches_split_a_topic_in_judging_order():
    rows = [("t1", d, i) for i, d in enumerate("abcde", start=1)]
    pieces = allocate(rows, holders={}, lengths={}, load={"ann": 0, "bob": 0}, batch_size=2)
    assert sorted(len(p.docs) for p in pieces) == [1, 2, 2]
    assert {d for p in pieces for d, _ in p.docs} == set("abcde")
