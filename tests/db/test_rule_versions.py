"""Rates whose runs were derived under two rule versions, on SQLite, MariaDB and PostgreSQL: the rows derived
under the old rules stay as they are (003_…: the answer is final), measure-rates stores the versions with
the rates, and compare (--at and --between) says beside a figure that its side mixes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from click.testing import Result
from sqlalchemy import Engine, func, select, update

from adapters import schema
from core.metrics import Metric
from core.outcomes import RULE_VERSION
from core.periods import Grain
from jobs.measure import measure_rates
from tests.db.configurations import (
    CANARY,
    NOW,
    NOW_TEXT,
    OLD_RULE_VERSION,
    STABLE,
    WINDOW,
    derived_under_two_rule_versions,
    first_week,
    mixed_week,
    plant_two_configurations,
)
from tests.db.conftest import on_sqlite_alone
from tests.older_marks import left_by_an_older_runrecord

MIXED = mixed_week()
AFTER_MIXED = MIXED + timedelta(weeks=1)
BOTH = f"mixes runs derived under rules {OLD_RULE_VERSION} and {RULE_VERSION}"
BETWEEN = ("--between", f"configuration:{STABLE}", f"configuration:{CANARY}")


@pytest.fixture
def two_versions(installation_engine: Engine) -> Engine:
    plant_two_configurations(installation_engine)
    derived_under_two_rule_versions(installation_engine)
    return installation_engine


def compare(run_cli: Callable[..., Result], url: str, *args: str) -> Result:
    return run_cli("compare", "edited_rate", *args, "--db", url, "--now", NOW_TEXT)


def stored_versions(engine: Engine, metric: Metric) -> dict[str, str]:
    """The metric's weekly rows of all runs: period start → rule_versions as stored."""
    r = schema.rate.c
    query = select(r.period_start, r.rule_versions).where(
        r.metric == metric.value, r.grain == Grain.WEEK.value, r.group_kind == "all"
    )
    with engine.connect() as connection:
        return {str(row.period_start)[:10]: row.rule_versions for row in connection.execute(query)}


def test_the_rows_derived_under_the_old_rules_stay_as_they_are(two_versions: Engine) -> None:
    o = schema.run_outcome.c
    query = select(o.rule_version, func.count()).group_by(o.rule_version)

    with two_versions.connect() as connection:
        versions = dict(connection.execute(query).all())

    # week 0 (12 runs and the rare configuration's 3) and three runs of each configuration in the mixed week
    assert versions == {OLD_RULE_VERSION: 12 + 3 + 6, RULE_VERSION: 6 + 12 + 12}


def test_measure_rates_stores_the_rule_versions_of_the_runs_each_outcome_rate_counts(
    two_versions: Engine,
) -> None:
    edited = stored_versions(two_versions, Metric.EDITED_RATE)
    scopes = stored_versions(two_versions, Metric.EDITED_SAME_FIELDS)
    runs = stored_versions(two_versions, Metric.RUNS)

    first = first_week(NOW)
    assert edited[first.isoformat()] == OLD_RULE_VERSION
    assert edited[MIXED.isoformat()] == f"{OLD_RULE_VERSION},{RULE_VERSION}"
    assert edited[AFTER_MIXED.isoformat()] == RULE_VERSION
    assert scopes[MIXED.isoformat()] == f"{OLD_RULE_VERSION},{RULE_VERSION}"
    assert set(runs.values()) == {""}  # a count of facts names no rules


def test_measuring_again_writes_the_same_rule_versions(two_versions: Engine) -> None:
    before = stored_versions(two_versions, Metric.EDITED_RATE)

    measure_rates(two_versions, now=NOW, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY))

    assert stored_versions(two_versions, Metric.EDITED_RATE) == before


@on_sqlite_alone
def test_a_period_whose_runs_were_derived_under_two_rule_versions_says_so_beside_its_rate(
    two_versions: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    at = ("--at", AFTER_MIXED.isoformat(), "--weeks", "1")

    text = compare(run_cli, installation_url, *at)
    document = json.loads(compare(run_cli, installation_url, *at, "--json").stdout)

    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    before = next(n for n, line in enumerate(lines) if line.startswith("  before  "))
    assert lines[before + 1] == f"  before {BOTH}"
    assert not any(line.startswith("  after ") and "mixes" in line for line in lines)
    assert document["before"]["rule_versions"] == [OLD_RULE_VERSION, RULE_VERSION]
    assert document["after"]["rule_versions"] == [RULE_VERSION]


@on_sqlite_alone
def test_a_period_of_one_rule_version_says_nothing(
    two_versions: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    at = ("--at", (AFTER_MIXED + timedelta(weeks=1)).isoformat(), "--weeks", "1")

    result = compare(run_cli, installation_url, *at)

    assert result.exit_code == 0, result.output
    assert "mixes" not in result.output


@on_sqlite_alone
def test_a_configuration_whose_span_mixes_two_rule_versions_says_so_beside_its_side(
    two_versions: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    text = compare(run_cli, installation_url, *BETWEEN)
    document = json.loads(compare(run_cli, installation_url, *BETWEEN, "--json").stdout)

    assert text.exit_code == 0, text.output
    assert f"  {STABLE} {BOTH}" in text.output.splitlines()
    assert f"  {CANARY} {BOTH}" in text.output.splitlines()
    assert document["first"]["rule_versions"] == [OLD_RULE_VERSION, RULE_VERSION]
    assert document["second"]["rule_versions"] == [OLD_RULE_VERSION, RULE_VERSION]


@on_sqlite_alone
def test_a_span_of_configurations_of_one_rule_version_says_nothing(
    two_versions: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = compare(run_cli, installation_url, *BETWEEN, "--from", AFTER_MIXED.isoformat())

    assert result.exit_code == 0, result.output
    assert "mixes" not in result.output


def test_rates_stored_before_the_rule_versions_were_get_them_in_their_closed_periods_too(
    two_versions: Engine,
) -> None:
    with two_versions.begin() as connection:  # as a measure-rates from before the column left them
        left_by_an_older_runrecord(connection, rates_version=4)
        connection.execute(update(schema.rate).values(rule_versions=""))

    summary = measure_rates(two_versions, now=NOW, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY))

    assert summary.rates_rewritten
    assert stored_versions(two_versions, Metric.EDITED_RATE)[MIXED.isoformat()] == (
        f"{OLD_RULE_VERSION},{RULE_VERSION}"
    )
