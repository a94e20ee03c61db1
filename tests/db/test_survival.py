"""runrecord survival: the counts in the database, the curves, the log-rank test, on all three dialects."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from alembic import command
from click.testing import Result
from sqlalchemy import Engine, event, select

from adapters import schema, survival
from core.groups import ALL_RUNS, Group, GroupKind
from core.survival import Tally
from jobs.derive import derive_outcomes
from jobs.schema_setup import alembic_config
from tests.db.configurations import (
    CANARY,
    CANARY_EDIT_AFTER_S,
    CANARY_EDITED_A_WEEK,
    DAY,
    HOUR,
    NOW,
    RARE,
    RUNS_A_WEEK,
    STABLE,
    STABLE_EDIT_AFTER_S,
    STABLE_EDITED_A_WEEK,
    WINDOW,
    derived_and_measured,
    installation,
    plant_two_configurations,
    seo_run,
)
from tests.db.conftest import on_sqlite_alone

BETWEEN = ("--between", f"configuration:{STABLE}", f"configuration:{CANARY}")


@pytest.fixture
def derived(installation_engine: Engine) -> Engine:
    plant_two_configurations(installation_engine)
    derived_and_measured(installation_engine)
    return installation_engine


def assert_one_error_line(result: Result, *needles: str) -> None:
    assert result.exit_code == 1, result.output
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("runrecord: error:"), (
        result.stderr
    )
    for needle in needles:
        assert needle in result.stderr


# --- the counts ---------------------------------------------------------------------------------------------


def test_the_database_hands_over_one_tally_per_distinct_time_never_a_time_per_write(derived: Engine) -> None:
    with derived.connect() as connection:
        canary = survival.group_tallies(connection, Group(GroupKind.CONFIGURATION, CANARY), window_s=WINDOW)

    edited, kept = 4 * CANARY_EDITED_A_WEEK, 4 * (RUNS_A_WEEK - CANARY_EDITED_A_WEEK)
    assert sorted(canary.tallies, key=lambda t: t.time) == [
        Tally(CANARY_EDIT_AFTER_S, edited, 0),
        Tally(WINDOW, 0, kept),
    ]
    assert (canary.runs, canary.unknown, canary.undated, canary.window_s) == (4 * RUNS_A_WEEK, 0, 0, WINDOW)


def test_all_runs_sum_every_configuration(derived: Engine) -> None:
    with derived.connect() as connection:
        counted = survival.group_tallies(connection, ALL_RUNS, window_s=WINDOW)

    changed = {t.time: t.events for t in counted.tallies if t.events}
    assert changed == {
        CANARY_EDIT_AFTER_S: 4 * CANARY_EDITED_A_WEEK + 3,
        STABLE_EDIT_AFTER_S: 4 * STABLE_EDITED_A_WEEK,
    }
    assert counted.runs == 8 * RUNS_A_WEEK + 3


def test_unknown_writes_and_undated_discards_are_left_out_and_counted_beside_the_curve(
    installation_engine: Engine,
) -> None:
    at = NOW - 20 * DAY
    with installation(installation_engine) as site:
        for n in range(5):
            seo_run(site, STABLE, at + n * HOUR)
        page = site.page("Import", at=at - 30 * DAY, history=False)
        chat = site.conversation(configuration=STABLE, at=at, page=page)
        chat.user("Räume auf.", at=at)
        run = chat.run()
        run.propose("update_record", page, fields=("title",))
        run.approve(at=at + 20, history=False)  # no history row at all: unknown (no_history_row)
        gone = site.missing_table_record("tx_news_domain_model_news", 77)
        run.propose("update_record", gone, fields=("title",))
        run.approve(at=at + 40)  # its table is gone: discarded, and no human row says when
        run.finish()
        chat.close()
    derived_and_measured(installation_engine)

    with installation_engine.connect() as connection:
        counted = survival.group_tallies(connection, Group(GroupKind.CONFIGURATION, STABLE), window_s=WINDOW)

    assert (counted.unknown, counted.undated) == (1, 1)
    assert sum(t.events + t.censored for t in counted.tallies) == 5
    assert counted.runs == 5  # the run of the two left-out writes has none in the curve


def test_a_write_nothing_changed_is_censored_at_its_runs_window_not_the_settings(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        for n in range(5):
            seo_run(site, STABLE, NOW - 20 * DAY + n * HOUR)
    derived_and_measured(installation_engine, window_s=3 * DAY)

    result = run_cli("survival", "--db", installation_url, "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["window_s"] == 3 * DAY
    assert [mark["t"] for mark in document["curves"][0]["marks"]] == ["1 h", "1 d", "2 d", "3 d"]


# --- the command --------------------------------------------------------------------------------------------


@on_sqlite_alone
def test_survival_prints_the_curve_of_all_writes_at_its_marks_with_band_and_writes_at_risk(
    derived: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("survival", "--db", installation_url)

    assert result.exit_code == 0, result.output
    writes = 8 * RUNS_A_WEEK + 3
    assert f"all writes: {writes} writes of {writes} runs" in result.output
    for mark in ("1 h", "1 d", "2 d", "3 d", "5 d", "7 d"):
        assert f"\n  {mark:>6}  " in result.output
    assert "median time to the first change: 3.0 d" in result.output  # 27 of the 51 changed by then


@on_sqlite_alone
def test_between_two_configurations_gives_both_curves_their_medians_and_the_log_rank_test(
    derived: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("survival", *BETWEEN, "--db", installation_url, "--json")

    assert result.exit_code == 0, result.output
    stable, canary = json.loads(result.stdout)["curves"]
    assert (stable["group"], canary["group"]) == (f"configuration:{STABLE}", f"configuration:{CANARY}")
    assert canary["median_s"] == CANARY_EDIT_AFTER_S and stable["median_s"] is None
    one_hour = canary["marks"][0]
    assert one_hour["untouched"] == pytest.approx(1 - CANARY_EDITED_A_WEEK / RUNS_A_WEEK)
    assert one_hour["band_95"][0] < one_hour["untouched"] < one_hour["band_95"][1]
    test = json.loads(result.stdout)["log_rank"]
    assert test["p_value"] < 0.05 and test["significant"]
    assert test["observed"] == [4 * STABLE_EDITED_A_WEEK, 4 * CANARY_EDITED_A_WEEK]


@on_sqlite_alone
def test_a_configuration_with_fewer_than_five_runs_is_too_few_to_show(
    derived: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    text = run_cli("survival", "--group", f"configuration:{RARE}", "--db", installation_url)
    between = run_cli(
        "survival", "--between", f"configuration:{STABLE}", f"configuration:{RARE}", "--db", installation_url
    )

    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[-1] == f"configuration {RARE}: too few to show (fewer than 5 runs)"
    assert "log-rank test" in between.output and "not computed" in between.output


def test_survival_reads_only_our_outcome_tables_and_never_an_editor(
    derived: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    sent: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        sent.append(statement.lower())

    event.listen(Engine, "before_cursor_execute", record)
    try:
        result = run_cli("survival", *BETWEEN, "--db", installation_url)
    finally:
        event.remove(Engine, "before_cursor_execute", record)

    assert result.exit_code == 0, result.output
    assert sent and not any("be_user" in statement or "sys_history" in statement for statement in sent)
    assert not any("tx_nrllm_agentrun" in statement for statement in sent)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--group", STABLE), ("--group takes configuration:IDENTIFIER",)),
        (("--group", "skill:seo-check"), ("--group takes configuration:IDENTIFIER",)),
        (("--group", "configuration:nobody"), ("no configuration 'nobody'", f"configuration:{CANARY}")),
        ((*BETWEEN, "--group", f"configuration:{STABLE}"), ("not both",)),
        (("--between", f"configuration:{CANARY}", f"configuration:{CANARY}"), ("two different",)),
    ],
)
@on_sqlite_alone
def test_a_malformed_survival_request_is_one_error_line(
    derived: Engine,
    installation_url: str,
    run_cli: Callable[..., Result],
    args: tuple[str, ...],
    needles: tuple[str, ...],
) -> None:
    assert_one_error_line(run_cli("survival", *args, "--db", installation_url), *needles)


@on_sqlite_alone
def test_without_derived_outcomes_survival_says_to_run_derive_outcomes(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    assert_one_error_line(run_cli("survival", "--db", installation_url), "runrecord derive-outcomes")


def test_one_side_followed_by_an_option_is_one_usage_error_line_naming_between(
    run_cli: Callable[..., Result],
) -> None:
    result = run_cli("survival", "--between", f"configuration:{STABLE}", "--db", "sqlite:///elsewhere.sqlite")

    assert result.exit_code == 2
    assert result.stderr == (
        "runrecord: error: runrecord survival: Invalid value for '--between': it takes two sides, "
        "configuration:A configuration:B, and '--db' is an option, not a side "
        "(see runrecord survival --help)\n"
    )


def _kept(engine: Engine) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    t, g = schema.survival_tally.c, schema.survival_group.c
    with engine.connect() as connection:
        tallies = [
            tuple(row)
            for row in connection.execute(
                select(t.configuration_identifier, t.t, t.events, t.writes).order_by(
                    t.configuration_identifier, t.t
                )
            )
        ]
        groups = [
            tuple(row)
            for row in connection.execute(
                select(g.configuration_identifier, g.runs, g.unknown, g.undated, g.window_s).order_by(
                    g.configuration_identifier
                )
            )
        ]
    return tallies, groups


def test_the_counts_kept_batch_by_batch_equal_a_count_of_the_stored_outcomes_as_migration_0010_makes_it(
    installation_engine: Engine,
) -> None:
    plant_two_configurations(installation_engine)
    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW, batch_size=7)
    kept = _kept(installation_engine)

    # Migration 0010 counts the outcomes derived before it from the stored rows, in one statement.
    with installation_engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0009")
        command.upgrade(alembic_config(connection), "head")

    assert kept[0] and kept[1]
    assert _kept(installation_engine) == kept
