"""The metric registry (core.metrics)."""

from __future__ import annotations

import pytest

from core.metrics import (
    COUNTS,
    DEFINITIONS,
    METRICS,
    RATES,
    RATES_VERSION,
    STORED_SINCE,
    Metric,
    MetricDefinition,
)


def test_the_counts_are_no_rates_and_every_metric_is_one_or_the_other() -> None:
    assert set(COUNTS) == {Metric.RUNS, Metric.WINDOW_OPEN}
    assert set(COUNTS) | set(RATES) == set(Metric) and not set(COUNTS) & set(RATES)
    assert [definition.metric for definition in METRICS] == list(DEFINITIONS)
    assert set(DEFINITIONS) == set(Metric)
    for metric in COUNTS:
        assert DEFINITIONS[metric].denominator == "the same (a count, not a rate)"


def test_a_metric_is_stored_since_a_rates_version_no_newer_than_the_current_one() -> None:
    assert STORED_SINCE[Metric.WINDOW_OPEN] == 2
    assert STORED_SINCE[Metric.NOTICE_AGREEMENT] == 3
    assert all(1 <= version <= RATES_VERSION for version in STORED_SINCE.values())


@pytest.mark.parametrize("definition", METRICS, ids=lambda definition: definition.metric.value)
def test_every_metric_has_a_label_the_dashboard_names_it_by(definition: MetricDefinition) -> None:
    assert definition.label.strip() != ""


def test_no_two_metrics_share_a_label() -> None:
    labels = [definition.label for definition in METRICS]

    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("definition", METRICS, ids=lambda definition: definition.metric.value)
def test_every_metric_states_its_numerator_denominator_and_exclusions(definition: MetricDefinition) -> None:
    assert definition.numerator and definition.denominator and definition.excluded
