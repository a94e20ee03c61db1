"""release add|list and compare, on SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from click.testing import Result
from sqlalchemy import Engine, func, select, text

from adapters import schema
from core.periods import Grain
from core.time import DAY_S
from data.builder import Installation
from jobs.measure import measure_rates
from tests.db.conftest import on_sqlite_alone

DAY = DAY_S
WINDOW = 7 * DAY
NOW = int(datetime(2026, 12, 2, 12, tzinfo=UTC).timestamp())
NOW_TEXT = "2026-12-02T12:00:00"
RELEASE = "2026-11-02"  # a Monday
RELEASED_AT = int(datetime(2026, 11, 2, tzinfo=UTC).timestamp())


def assert_one_error_line(result: Result) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output + result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("runrecord: error:"), result.stderr


@contextmanager
def installation(engine: Engine) -> Iterator[Installation]:
    with engine.begin() as connection:
        site = Installation(connection)
        yield site
        site.finish()


def talks(
    site: Installation,
    at: int,
    answers: list[str],
    configuration: str = "content-assistant",
    notice: str | None = None,
) -> None:
    """One conversation per answer, an hour apart, each a turn that writes nothing (stored with `notice`)."""
    for n, answer in enumerate(answers):
        chat = site.conversation(configuration=configuration, at=at + n * 3600)
        chat.user("Ändere bitte die Überschrift.", at=at + n * 3600)
        run = chat.run()
        run.llm("get_page")
        run.tool("get_page")
        run.answer(answer, notice=notice)
        run.finish()
        chat.close()


@pytest.fixture
def measured(installation_engine: Engine) -> Engine:
    """Four weeks before the release: 6 of 20 answers claim a change; after it 1 of 21, one of them in a
    configuration with a single run."""
    with installation(installation_engine) as site:
        for week in range(4):
            before = RELEASED_AT - (week + 1) * 7 * DAY + DAY
            claims = 2 if week < 2 else 1
            talks(site, before, ["Erledigt, gespeichert."] * claims + ["Ein Vorschlag."] * (5 - claims))
            after = RELEASED_AT + week * 7 * DAY + DAY
            claims = 1 if week == 0 else 0
            talks(site, after, ["Erledigt."] * claims + ["Ein Vorschlag."] * (5 - claims))
        talks(site, RELEASED_AT + 2 * DAY, ["Ein Vorschlag."], configuration="rare-assistant")
    measure_rates(installation_engine, now=NOW, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY))
    return installation_engine


# --- markers ------------------------------------------------------------------------------------------------


def test_a_marker_is_recorded_once_and_listed_by_date(
    installation_url: str, run_cli: Callable[..., Result]
) -> None:
    first = run_cli("release", "add", "2026-11-02", "Prompt rule", "--db", installation_url)
    again = run_cli("release", "add", "2026-11-02", "Prompt   rule", "--db", installation_url)
    run_cli("release", "add", "2026-10-01", "Notice shown", "--db", installation_url)

    listed = run_cli("release", "list", "--db", installation_url)
    as_json = run_cli("release", "list", "--db", installation_url, "--json")

    assert first.output.startswith("recorded: 2026-11-02 Prompt rule")
    assert again.output.startswith("already recorded")
    assert listed.output.splitlines() == ["2026-10-01  Notice shown", "2026-11-02  Prompt rule"]
    assert json.loads(as_json.output) == [
        {"released_on": "2026-10-01", "label": "Notice shown"},
        {"released_on": "2026-11-02", "label": "Prompt rule"},
    ]


@on_sqlite_alone  # MariaDB and PostgreSQL keep no such value in a DATE column
@pytest.mark.parametrize("stored", ["garbage", "2026-99-99"])
def test_a_marker_whose_date_is_no_date_is_one_error_line_naming_its_row(
    installation_url: str, installation_engine: Engine, run_cli: Callable[..., Result], stored: str
) -> None:
    run_cli("release", "add", "2026-11-02", "Prompt rule", "--db", installation_url)
    with installation_engine.begin() as connection:
        uid = connection.execute(select(schema.release.c.uid)).scalar_one()
        connection.execute(text(f"UPDATE {schema.release.name} SET released_on = :day"), {"day": stored})

    listed = run_cli("release", "list", "--db", installation_url)

    assert listed.exit_code == 1 and "Traceback" not in listed.output + listed.stderr
    assert listed.stderr == (
        f"runrecord: error: tx_runrecord_release row #{uid} holds no date (YYYY-MM-DD) in released_on: "
        "mend or delete it\n"
    )


@on_sqlite_alone  # MariaDB and PostgreSQL keep no such value in a DATE column
def test_a_measurement_whose_release_comparison_fails_says_its_rates_are_stored(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    run_cli("release", "add", "2026-11-02", "Prompt rule", "--db", installation_url)
    with measured.begin() as connection:
        uid = connection.execute(select(schema.release.c.uid)).scalar_one()
        connection.execute(text(f"UPDATE {schema.release.name} SET released_on = '2026-99-99'"))
        connection.execute(schema.rate.delete())

    result = run_cli("measure-rates", "--now", NOW_TEXT, "--db", installation_url)

    with measured.connect() as connection:
        rates = connection.execute(select(func.count()).select_from(schema.rate)).scalar_one()
    assert result.exit_code == 1 and rates > 0
    assert result.output.startswith(f"measured as of {NOW_TEXT}+00:00")
    assert "alert check failed" in result.output
    assert result.stderr == (
        "runrecord: error: the rates are stored; comparing them around the releases failed: "
        f"tx_runrecord_release row #{uid} holds no date (YYYY-MM-DD) in released_on: mend or delete it\n"
    )


@on_sqlite_alone
def test_no_marker_says_how_to_add_one(installation_url: str, run_cli: Callable[..., Result]) -> None:
    assert "runrecord release add" in run_cli("release", "list", "--db", installation_url).output


@on_sqlite_alone
@pytest.mark.parametrize(
    ("day", "label"),
    [
        ("2026-13-01", "x"),
        ("yesterday", "x"),
        ("2026-11-02", "   "),
        ("2026-11-02", "Prompt \x1b[2J rule"),
        ("2026-11-02", "Prompt\x00rule"),
        ("2026-11-02", "Prompt\u200brule"),
    ],
)
def test_a_bad_date_an_empty_label_or_a_control_character_in_it_is_one_error_line(
    installation_url: str, run_cli: Callable[..., Result], day: str, label: str
) -> None:
    assert_one_error_line(run_cli("release", "add", day, label, "--db", installation_url))


@on_sqlite_alone
def test_a_release_label_that_is_not_utf8_is_refused_in_one_line(
    installation_url: str, installation_engine: Engine, run_cli: Callable[..., Result]
) -> None:
    label = b"Prompt \xff rule".decode("utf-8", "surrogateescape")  # as Python hands on a raw byte argument

    result = run_cli("release", "add", "2026-11-02", label, "--db", installation_url)

    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "runrecord: error: runrecord release add: the argument LABEL is not UTF-8 text "
        "(see runrecord release add --help)\n"
    )
    with installation_engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(schema.release)).scalar_one() == 0


# --- compare ------------------------------------------------------------------------------------------------


@on_sqlite_alone
def test_compare_prints_both_sides_the_difference_the_test_and_a_significant_drop_with_a_wide_interval(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    run_cli("release", "add", RELEASE, "Prompt rule", "--db", installation_url)

    result = run_cli(
        "compare", "claimed_unwritten_rate", "--at", RELEASE, "--db", installation_url, "--now", NOW_TEXT
    )

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "claimed_unwritten_rate, all runs, at 2026-11-02 (release: Prompt rule)"
    assert any(
        line.startswith("  before  2026-10-05 – 2026-11-01 (4 weeks, 4 with data): 6 / 20 = 30.0%, 95% CI")
        for line in lines
    )
    assert any(
        line.startswith("  after   2026-11-02 – 2026-11-29 (4 weeks, 4 with data")
        and ": 1 / 21 = 4.8%" in line
        for line in lines
    )
    difference = "difference −25.2 points (after − before), 95% CI"
    assert any(difference in line and "p = 0.0" in line for line in lines)
    assert "  → fell significantly: better" in lines  # p < 0.05 decides, though the interval spans ±20 points
    assert any(
        line.startswith("  rule: significant when the two-sided two-proportion z-test") for line in lines
    )


@on_sqlite_alone
def test_compare_as_json_carries_every_figure(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(
        "compare",
        "claimed_unwritten_rate",
        "--at",
        RELEASE,
        "--db",
        installation_url,
        "--now",
        NOW_TEXT,
        "--json",
    )

    document = json.loads(result.output)
    assert document["before"]["numerator"] == 6 and document["before"]["denominator"] == 20
    assert document["after"]["numerator"] == 1 and document["after"]["denominator"] == 21
    low, high = document["before"]["wilson_95"]
    assert low < 0.3 < high
    assert (
        document["difference"]["too_few_to_tell"] is False
        and document["verdict"] == "fell significantly: better"
    )
    assert document["difference"]["significant"] is True
    assert 0 < document["difference"]["p_value"] < 0.05
    assert document["definition"]["denominator"].startswith("completed answers")


def test_the_week_that_holds_a_midweek_date_is_on_neither_side(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(
        "compare", "claimed_unwritten_rate", "--at", "2026-11-04", "--db", installation_url, "--json"
    )

    document = json.loads(result.output)
    assert document["straddling_period"] == "2026-11-02"
    assert document["before"]["to"] == "2026-11-01" and document["after"]["from"] == "2026-11-09"


def test_compare_by_day_meets_exactly_at_the_date(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(
        "compare",
        "claimed_unwritten_rate",
        "--at",
        RELEASE,
        "--grain",
        "day",
        "--db",
        installation_url,
        "--json",
    )

    document = json.loads(result.output)
    assert (document["before"]["numerator"], document["before"]["denominator"]) == (6, 20)
    assert document["after"]["periods"] == 28


@on_sqlite_alone
def test_a_configuration_with_fewer_than_five_runs_is_too_few_to_show(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(
        "compare",
        "claimed_unwritten_rate",
        "--at",
        RELEASE,
        "--group",
        "configuration:rare-assistant",
        "--db",
        installation_url,
    )

    assert result.exit_code == 0, result.output
    assert "too few to show (fewer than 5 runs in a week)" in result.output
    assert "→ too few to show" in result.output
    assert "1 / 1" not in result.output


@on_sqlite_alone
def test_measure_rates_shows_every_recorded_release(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    run_cli("release", "add", RELEASE, "Prompt rule", "--db", installation_url)

    result = run_cli("measure-rates", "--db", installation_url, "--now", NOW_TEXT)

    assert "release 2026-11-02 'Prompt rule'" in result.output
    assert any(
        "claimed_unwritten_rate" in line and "30.0% (6/20)" in line for line in result.output.splitlines()
    )


@on_sqlite_alone
def test_notice_agreement_is_compared_like_any_rate(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        before = RELEASED_AT - 7 * DAY + DAY
        talks(site, before, ["Erledigt."] * 3 + ["Fertig, die Seite ist jetzt live."], notice="nothingSaved")
        talks(site, before + 6 * 3600, ["Ein Vorschlag."] * 4)
        talks(site, RELEASED_AT + DAY, ["Erledigt."] * 2, notice="nothingSaved")
        talks(site, RELEASED_AT + DAY + 3 * 3600, ["Ein Vorschlag."] * 6)
    measure_rates(installation_engine, now=NOW, window_s=WINDOW, grains=(Grain.WEEK,))
    arguments = ("compare", "notice_agreement", "--at", RELEASE, "--weeks", "1", "--db", installation_url)

    result = run_cli(*arguments, "--now", NOW_TEXT, "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert (document["before"]["numerator"], document["before"]["denominator"]) == (7, 8)
    assert (document["after"]["numerator"], document["after"]["denominator"]) == (8, 8)
    assert document["definition"]["denominator"].startswith("completed answers stored at or after")


@on_sqlite_alone
def test_a_group_side_with_one_period_under_five_runs_is_too_few_to_show_whatever_the_side_holds(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    # Summed over a side, 5 + 2 runs would pass; the longer side minus the shorter would give the small
    # week's own figure away (DESIGN.md, "Privacy": fewer than 5 runs in a period).
    sparse = "sparse-assistant"
    with installation(installation_engine) as site:
        talks(site, RELEASED_AT - 7 * DAY + DAY, ["Ein Vorschlag."] * 6, configuration=sparse)
        talks(site, RELEASED_AT + DAY, ["Erledigt."] + ["Ein Vorschlag."] * 4, configuration=sparse)
        talks(site, RELEASED_AT + 8 * DAY, ["Erledigt."] * 2, configuration=sparse)
    measure_rates(installation_engine, now=NOW, window_s=WINDOW, grains=(Grain.WEEK,))
    arguments = ("compare", "claimed_unwritten_rate", "--at", RELEASE, "--db", installation_url, "--json")
    group = ("--group", f"configuration:{sparse}")

    one_week = json.loads(run_cli(*arguments, *group, "--weeks", "1").output)
    two_weeks = json.loads(run_cli(*arguments, *group, "--weeks", "2").output)

    assert one_week["after"]["denominator"] == 5 and one_week["verdict"] != "too few to show"
    assert two_weeks["after"] == {**two_weeks["after"], "too_few_to_show": True}
    assert "numerator" not in two_weeks["after"] and two_weeks["verdict"] == "too few to show"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (("compare", "be_user_rate", "--at", RELEASE), "no metric 'be_user_rate'"),
        (("compare", "runs", "--at", RELEASE), "runs is a count, not a rate"),
        (("compare", "window_open", "--at", RELEASE), "window_open is a count, not a rate"),
        (("compare", "edited_rate", "--at", "soon"), "is not a date (YYYY-MM-DD): 'soon'"),
        (("compare", "edited_rate", "--at", "9999-12-31"), "--at is not from 1970 up to the year 9000"),
        (("release", "add", "0001-01-01", "Prompt rule"), "DATE is not from 1970 up to the year 9000"),
        (
            ("compare", "edited_rate", "--at", RELEASE, "--group", "editor:90001"),
            "--group is all, configuration:IDENTIFIER or skill:IDENTIFIER, not 'editor:90001'",
        ),
    ],
)
@on_sqlite_alone
def test_a_bad_metric_date_or_group_is_one_error_line_and_nothing_is_recorded(
    installation_url: str,
    installation_engine: Engine,
    run_cli: Callable[..., Result],
    arguments: tuple[str, ...],
    said: str,
) -> None:
    # The database holds no rates: a check that let the arguments through would end in "no rates … yet"
    # instead, one error line too.
    result = run_cli(*arguments, "--db", installation_url)

    assert_one_error_line(result)
    assert said in result.stderr, result.stderr
    with installation_engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(schema.release)).scalar_one() == 0


@on_sqlite_alone
def test_a_count_is_not_compared_and_measure_rates_compares_no_count(
    measured: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    run_cli("release", "add", RELEASE, "Prompt rule", "--db", installation_url)

    refused = run_cli("compare", "window_open", "--at", RELEASE, "--db", installation_url)
    measured_now = run_cli("measure-rates", "--db", installation_url, "--now", NOW_TEXT)

    assert_one_error_line(refused)
    assert "window_open is a count, not a rate" in refused.stderr
    compared = [line.split()[0] for line in measured_now.output.splitlines() if "points, p = " in line]
    assert "claimed_unwritten_rate" in compared and not {"runs", "window_open"} & set(compared)


@on_sqlite_alone
def test_compare_before_any_measurement_says_to_measure(
    installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("compare", "edited_rate", "--at", RELEASE, "--db", installation_url)

    assert_one_error_line(result)
    assert "runrecord measure-rates" in result.stderr
