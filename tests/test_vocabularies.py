"""One object per set of named choices: menus, parsers and help texts read the same names."""

from __future__ import annotations

import pytest

from evaluation.engine.corrections import CORRECTIONS
from evaluation.engine.significance import CORRECTION_CHOICES, TEST_CHOICES, TESTS
from judging.policies import DEFAULT_POLICY, POLICIES, check_policy
from workbench.formats.vocabulary import UnknownChoice, Vocabulary


def test_an_unknown_name_is_refused_naming_every_name_that_exists():
    with pytest.raises(UnknownChoice) as error:
        CORRECTION_CHOICES.parse("fdr")
    assert str(error.value) == "unknown correction 'fdr'; choose one of holm, bonferroni, bh, none"
    with pytest.raises(ValueError, match="unknown qrels policy 'consensus'; choose one of adjudicated, majority"):
        check_policy("consensus")


def test_an_empty_name_gives_the_default_only_where_one_is_asked_for():
    assert TEST_CHOICES.parse("", default=TEST_CHOICES.default) == "t"
    assert POLICIES.default == DEFAULT_POLICY == "adjudicated"
    with pytest.raises(UnknownChoice):
        TEST_CHOICES.parse("")


def test_the_engines_names_and_the_pages_labels_cannot_drift_apart():
    assert CORRECTION_CHOICES.names == CORRECTIONS and TEST_CHOICES.names == TESTS
    with pytest.raises(ValueError, match=r"missing \['bh'\]"):
        Vocabulary.of("correction", ("holm", "bh"), {"holm": "Holm"})
    with pytest.raises(ValueError, match=r"unknown \['fdr'\]"):
        Vocabulary.of("correction", ("holm",), {"holm": "Holm", "fdr": "FDR"})


def test_labels_read_as_a_phrase():
    assert POLICIES.describe() == ("adjudicated, else majority, majority, human, machine, human over machine or hybrid")
    assert Vocabulary("x", [("a", "A")]).describe() == "A"
    assert CORRECTION_CHOICES.label("bh") == "Benjamini–Hochberg (FDR)"
