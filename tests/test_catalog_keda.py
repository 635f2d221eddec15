"""The KEDA feature table: which release first accepts each version-gated field the program renders."""

from __future__ import annotations

import pytest

from catalog.keda import FEATURES, OLDEST_SUPPORTED, Feature, parse_version, supports


def test_fallback_behavior_arrived_in_keda_2_17():
    assert FEATURES[Feature.FALLBACK_BEHAVIOR][0] == "2.17"


def test_fallback_with_value_triggers_arrived_in_keda_2_18():
    assert FEATURES[Feature.FALLBACK_WITH_VALUE_TRIGGERS][0] == "2.18"


def test_every_feature_names_its_source():
    assert all(source.startswith("kedacore/keda#") for _, source in FEATURES.values())


def unsupported(version: str, features: list[Feature]) -> list[Feature]:
    """The features among `features` that KEDA `version` would refuse."""
    return [feature for feature in features if not supports(version, feature)]


def test_the_oldest_supported_release_has_no_gated_feature():
    assert unsupported(OLDEST_SUPPORTED, list(Feature)) == list(Feature)


@pytest.mark.parametrize(
    ("version", "expected"),
    [("2.16", False), ("2.16.1", False), ("2.17.0", True), ("v2.17.1", True), ("2.20.2", True), ("3.0", True)],
)
def test_fallback_behavior_support_by_release(version: str, expected: bool):
    assert supports(version, Feature.FALLBACK_BEHAVIOR) is expected


def test_keda_2_17_still_refuses_a_fallback_with_value_triggers():
    assert unsupported("2.17.1", list(Feature)) == [Feature.FALLBACK_WITH_VALUE_TRIGGERS]


def test_minor_versions_compare_as_numbers_not_text():
    assert parse_version("2.9") < parse_version("2.16")


@pytest.mark.parametrize("text", ["latest", "2", "2.x", ""])
def test_a_version_that_is_not_one_is_refused(text: str):
    with pytest.raises(ValueError, match="is not a KEDA version"):
        parse_version(text)
