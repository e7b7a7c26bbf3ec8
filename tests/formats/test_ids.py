"""The one natural order of topic ids (workbench.formats.ids), used by every page, export and pool."""

from workbench.formats.ids import all_integers, natural_positions, sorted_topics


def test_integer_ids_sort_as_numbers_negative_ones_included():
    assert sorted_topics(["10", "2", "-1", "0"]) == ["-1", "0", "2", "10"]


def test_one_id_that_is_not_an_integer_makes_every_id_sort_as_a_string():
    assert sorted_topics(["10", "2", "a1"]) == ["10", "2", "a1"]
    assert sorted_topics(["--5", "3"]) == ["--5", "3"]  # not an integer: no crash, string order


def test_repeats_are_kept_in_place_by_positions_and_dropped_by_sorted_topics():
    assert natural_positions(["10", "2", "10", "01", "1"]) == [3, 4, 1, 0, 2]
    assert sorted_topics(["2", "2", "1"]) == ["1", "2"]


def test_huge_integers_sort_exactly():
    assert sorted_topics(["99999999999999999999", "3"]) == ["3", "99999999999999999999"]
    assert all_integers(["-0", "12"]) and not all_integers(["1.5"]) and not all_integers(["1 "])
