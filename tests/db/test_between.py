"""compare METRIC --between configuration:A configuration:B, on SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import Result
from sqlalchemy import Engine

from tests.db.configurations import (
    CANARY,
    CANARY_EDITED_A_WEEK,
    NOW_TEXT,
    RARE,
    RUNS_A_WEEK,
    STABLE,
    STABLE_EDITED_A_WEEK,
    derived_and_measured,
    plant_two_configurations,
)
from tests.db.conftest import on_sqlite_alone

BETWEEN = ("--between", f"configuration:{STABLE}", f"configuration:{CANARY}")


def assert_one_error_line(result: Result, *needles: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output + result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("runrecord: error:"), result.stderr
    for needle in needles:
        assert needle in result.stderr


@pytest.fixture
def measured(installation_engine: Engine) -> Engine:
    plant_two_configurations(installation_engine)
    derived_and_measured(installation_engine)
    return installation_engine


def compare(run_cli: Callable[..., Result], url: str, *args: str) -> Result:
    return run_cli("compare", "edited_rate", *args, "--db", url, "--now", NOW_TEXT)


def test_both_configurations_are_summed_over_every_closed_week_both_have(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = compare(run_cli, installation_url, *BETWEEN)

    assert result.exit_code == 0, result.output
    stable, canary = 4 * STABLE_EDITED_A_WEEK, 4 * CANARY_EDITED_A_WEEK
    assert "over 2026-10-26 – 2026-11-22: 4 closed weeks both have" in result.output
    assert f"  {STABLE}: {stable} / {4 * RUNS_A_WEEK} = " in result.output
    assert f"  {CANARY}: {canary} / {4 * RUNS_A_WEEK} = " in result.output
    assert "95% CI" in result.output and "(Newcombe); two-proportion z-test p" in result.output
    assert "rule:" in result.output


@on_sqlite_alone
def test_a_large_difference_of_small_sides_is_significantly_higher_however_wide_its_interval(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = compare(run_cli, installation_url, *BETWEEN, "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    low, high = document["difference"]["newcombe_95"]
    assert document["difference"]["p_value"] < 0.05 and (high - low) / 2 > 0.05
    assert document["verdict"] == "significantly higher: worse"
    assert document["needed"]["per_side"] == 0


@on_sqlite_alone
def test_no_difference_on_small_sides_is_too_few_to_tell_and_says_what_each_side_needs(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(
        "compare", "discarded_rate", *BETWEEN, "--db", installation_url, "--now", NOW_TEXT, "--json"
    )

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["difference"]["p_value"] >= 0.05  # neither configuration's writes were discarded
    assert document["difference"]["second_minus_first"] == 0
    assert document["verdict"] == "too few to tell"
    needed = document["needed"]
    assert needed["per_side"] > 4 * RUNS_A_WEEK
    for side in ("first", "second"):
        assert needed[side]["have"] == 4 * RUNS_A_WEEK
        assert needed[side]["more"] == needed["per_side"] - 4 * RUNS_A_WEEK
        assert needed[side]["weekly"] == RUNS_A_WEEK
        assert needed[side]["weeks"] == -(-needed[side]["more"] // RUNS_A_WEEK)


def test_from_and_to_bound_the_span_to_the_whole_weeks_between_them(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = compare(
        run_cli, installation_url, *BETWEEN, "--from", "2026-10-28", "--to", "2026-11-15", "--json"
    )

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["from"], document["to"], document["periods"]) == ("2026-11-02", "2026-11-15", 2)
    assert document["first"]["denominator"] == 2 * RUNS_A_WEEK


@on_sqlite_alone
def test_the_day_grain_compares_days(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = compare(run_cli, installation_url, *BETWEEN, "--grain", "day", "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["grain"] == "day" and document["periods"] == 4


@on_sqlite_alone
def test_a_configuration_with_fewer_than_five_runs_in_a_week_is_too_few_to_show(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    text = compare(run_cli, installation_url, "--between", f"configuration:{STABLE}", f"configuration:{RARE}")
    as_json = compare(
        run_cli, installation_url, "--between", f"configuration:{STABLE}", f"configuration:{RARE}", "--json"
    )

    assert text.exit_code == 0, text.output
    assert f"  {RARE}: too few to show (fewer than 5 runs in a week)" in text.output
    assert "  difference " not in text.output and "→ too few to show" in text.output
    assert "3 / 3" not in text.output
    document = json.loads(as_json.stdout)
    assert document["second"] == {"too_few_to_show": True}
    assert document["difference"] is None and document["needed"] is None


@pytest.mark.parametrize(
    "group", [f"configuration:{CANARY}", "skill:seo-check"], ids=["configuration", "skill"]
)
@pytest.mark.parametrize("grain", ["week", "day"])
@on_sqlite_alone
def test_compare_at_takes_a_configuration_or_skill_the_rates_hold_at_either_grain(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result], group: str, grain: str
) -> None:
    result = compare(run_cli, installation_url, "--at", "2026-11-02", "--group", group, "--grain", grain)

    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"edited_rate, {group.replace(':', ' ')}, at 2026-11-02")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--between", STABLE, f"configuration:{CANARY}"), ("--between takes configuration:IDENTIFIER",)),
        (("--between", "skill:seo-check", f"configuration:{CANARY}"), ("'skill:seo-check'",)),
        (("--between", f"configuration:{STABLE}", f"configuration:{STABLE}"), ("two different",)),
        (
            ("--between", f"configuration:{STABLE}", "configuration:nobody"),
            ("no configuration 'nobody'", f"configuration:{CANARY}", f"configuration:{RARE}"),
        ),
        (
            ("--at", "2026-11-02", "--group", "configuration:nobody"),
            ("no configuration 'nobody' in the rates at grain week", f"configuration:{CANARY}"),
        ),
        (
            ("--at", "2026-11-02", "--group", "skill:nobody"),
            ("no skill 'nobody' in the rates at grain week", "skill:seo-check"),
        ),
        (
            ("--at", "2026-11-02", "--group", "skill:none", "--grain", "day"),
            ("no skill 'none' in the rates at grain day", "skill:seo-check"),
        ),
        ((*BETWEEN, "--at", "2026-11-02"), ("not both",)),
        ((), ("got neither",)),
        ((*BETWEEN, "--weeks", "2"), ("--weeks and --group go with --at",)),
        ((*BETWEEN, "--group", "all"), ("--weeks and --group go with --at",)),
        (("--at", "2026-11-02", "--from", "2026-11-02"), ("--from and --to go with --between",)),
        ((*BETWEEN, "--from", "2026-11-10", "--to", "2026-11-01"), ("is before --from",)),
        ((*BETWEEN, "--from", "2026-11-31"), ("--from is not a date",)),
        (
            (*BETWEEN, "--from", "2026-11-17", "--to", "2026-11-21"),
            ("no closed week", "between --from and --to"),
        ),
    ],
)
@on_sqlite_alone
def test_a_malformed_or_impossible_comparison_is_one_error_line(
    measured: Engine,
    installation_url: str,
    run_cli: Callable[..., Result],
    args: tuple[str, ...],
    needles: tuple[str, ...],
) -> None:
    assert_one_error_line(compare(run_cli, installation_url, *args), *needles)


@on_sqlite_alone
def test_without_rates_compare_between_says_to_run_measure_rates(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    assert_one_error_line(compare(run_cli, installation_url, *BETWEEN), "runrecord measure-rates")


def test_a_missing_second_side_is_one_usage_error_line(run_cli: Callable[..., Result]) -> None:
    result = run_cli("compare", "edited_rate", "--between", f"configuration:{STABLE}")

    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and "'--between' requires 2 arguments" in result.stderr


@pytest.mark.parametrize(
    "following",
    [
        ("--db", "sqlite:///elsewhere.sqlite"),
        ("--json",),
        ("--db=postgresql+psycopg://editor:Secret1@db/t3",),
    ],
    ids=["--db URL", "--json", "--db=URL"],
)
def test_one_side_followed_by_an_option_is_one_usage_error_line_naming_between(
    run_cli: Callable[..., Result], following: tuple[str, ...]
) -> None:
    result = run_cli("compare", "edited_rate", "--between", f"configuration:{STABLE}", *following)

    option = following[0].split("=")[0]  # named, never its value
    assert result.exit_code == 2
    assert result.stderr == (
        "runrecord: error: runrecord compare: Invalid value for '--between': it takes two sides, "
        f"configuration:A configuration:B, and '{option}' is an option, not a side "
        "(see runrecord compare --help)\n"
    )
