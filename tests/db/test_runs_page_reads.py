"""The Runs page's reads (adapters.runs) on SQLite, MariaDB and PostgreSQL: newest start first whatever the
uid, paged by a keyset of start and uid; a run found by its uuid or short id; the filters on what
measure-rates found of a run's answer; the runs without an outcome yet."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, insert, select, update

from adapters import runs, schema
from adapters.runs import RunFilter, Tables
from core.time import DAY_S
from data.builder import Installation
from jobs.measure import measure_rates

NOW = int(datetime(2026, 12, 2, 12, tzinfo=UTC).timestamp())
START = NOW - 30 * DAY_S
EVERY = Tables(outcomes=True, facts=True)
CLAIM = "Erledigt, die Überschrift ist gespeichert."


def _plant(engine: Engine) -> list[str]:
    """Three runs recorded in uid order but started two days, then zero, then one day after START; the first
    claims a change it never made, in a conversation with the skill seo-check. Their uuids in uid order."""
    uuids = []
    with engine.begin() as connection:
        site = Installation(connection, seed=0)
        for days, text, skill in (
            (2, CLAIM, "seo-check"),
            (0, "Ein Vorschlag.", ""),
            (1, "Ein Vorschlag.", ""),
        ):
            at = START + days * DAY_S
            chat = site.conversation(configuration="content-assistant", at=at, skill=skill)
            chat.user("Schlag mir eine Überschrift vor.", at=at)
            run = chat.run()
            run.llm("get_page")
            run.tool("get_page")
            run.answer(text)
            run.finish()
            chat.close()
            uuids.append(run.uuid)
        site.finish()
    return uuids


def _page(
    engine: Engine, chosen: RunFilter, before: tuple[int, int] | None = None, limit: int = 50
) -> list[Any]:
    with engine.connect() as connection:
        return list(runs.run_page(connection, chosen, tables=EVERY, before=before, limit=limit))


def test_runs_are_read_newest_start_first_and_paged_by_start_and_uid(installation_engine: Engine) -> None:
    first, second, third = _plant(installation_engine)

    one = _page(installation_engine, RunFilter(), limit=1)
    two = _page(installation_engine, RunFilter(), (one[0].started_at, one[0].uid), limit=1)
    three = _page(installation_engine, RunFilter(), (two[0].started_at, two[0].uid), limit=1)

    assert [row.uuid for row in one + two + three] == [first, third, second]
    assert _page(installation_engine, RunFilter(), (three[0].started_at, three[0].uid)) == []


def test_a_run_is_found_by_its_uuid_or_its_short_id(installation_engine: Engine) -> None:
    first, _, _ = _plant(installation_engine)

    with installation_engine.connect() as connection:
        found = (runs.uuids_of(connection, first), runs.uuids_of(connection, first[:8]))
        missing = runs.uuids_of(connection, "00000000")

    assert found == ((first,), (first,)) and missing == ()
    assert [row.uuid for row in _page(installation_engine, RunFilter(uuid=first[:8]))] == [first]


def test_the_claim_and_skill_filters_read_what_measure_rates_found(installation_engine: Engine) -> None:
    first, second, third = _plant(installation_engine)
    measure_rates(installation_engine, now=NOW, window_s=7 * DAY_S)

    claimed = _page(installation_engine, RunFilter(claim=True))
    skilled = _page(installation_engine, RunFilter(skill="seo-check"))
    without = _page(installation_engine, RunFilter(skill=runs.NO_SKILL))
    with installation_engine.connect() as connection:
        counted = runs.count_runs(connection, RunFilter(claim=True), tables=EVERY)

    assert [row.uuid for row in claimed] == [first] and counted == 1
    assert [row.uuid for row in skilled] == [first]
    assert [row.uuid for row in without] == [third, second]


def test_a_filter_on_facts_not_measured_yet_matches_no_run(installation_engine: Engine) -> None:
    _plant(installation_engine)

    with installation_engine.connect() as connection:
        counted = runs.count_runs(
            connection, RunFilter(denial=True), tables=Tables(outcomes=True, facts=False)
        )

    assert counted == 0


def test_the_none_yet_filter_lists_the_runs_without_an_outcome_and_counts_them(
    installation_engine: Engine,
) -> None:
    first, second, third = _plant(installation_engine)
    with installation_engine.begin() as connection:
        derived = select(schema.agentrun.c.uid).where(schema.agentrun.c.uuid == first).scalar_subquery()
        connection.execute(
            insert(schema.run_outcome).values(
                run_uid=derived,
                correlation_id=first,
                outcome="accepted_unchanged",
                writes=1,
                configuration_identifier="content-assistant",
                window_s=7 * DAY_S,
                rule_version="2026.12-1",
                derived_at=NOW,
                last_write_at=START,
            )
        )
    chosen = RunFilter(outcome=runs.NO_OUTCOME)

    listed = _page(installation_engine, chosen)
    with installation_engine.connect() as connection:
        counted = runs.count_runs(connection, chosen, tables=EVERY)

    assert [row.uuid for row in listed] == [third, second] and counted == 2
    assert [row.outcome for row in listed] == [None, None]


def _derived(connection: Any, uuid: str, outcome: str, scopes: list[str]) -> None:
    """The run's outcome row, and one written record of that outcome for each scope, stored as given."""
    run_uid = connection.execute(select(schema.agentrun.c.uid).where(schema.agentrun.c.uuid == uuid)).scalar()
    kept = {"correlation_id": uuid, "rule_version": "2026.12-1", "derived_at": NOW}
    connection.execute(
        insert(schema.run_outcome).values(
            run_uid=run_uid,
            outcome=outcome,
            writes=len(scopes),
            configuration_identifier="content-assistant",
            window_s=7 * DAY_S,
            last_write_at=START,
            **kept,
        )
    )
    for index, scope in enumerate(scopes):
        connection.execute(
            insert(schema.write_outcome).values(
                run_uid=run_uid,
                event_uid=run_uid * 100 + index,
                tablename="pages",
                recuid=index + 1,
                written_at=START,
                outcome=outcome,
                reason="",
                edit_scope=scope,
                **kept,
            )
        )


def _of_run(uuid: str) -> list[Any]:
    runs_uid = select(schema.agentrun.c.uid).where(schema.agentrun.c.uuid == uuid).scalar_subquery()
    return [schema.write_outcome.c.run_uid == runs_uid]


def test_the_scope_filter_lists_the_edited_runs_whose_first_scope_by_precedence_is_it(
    installation_engine: Engine,
) -> None:
    first, second, third = _plant(installation_engine)
    with installation_engine.begin() as connection:
        _derived(connection, first, "edited", ["other_fields", "same_fields"])
        # Compared byte for byte, as core.counting reads a scope: "Same_Fields " is none.
        _derived(connection, second, "edited", ["Same_Fields ", "released_only"])
        # A run that is not EDITED is never listed, whatever scope its EDITED writes have.
        _derived(connection, third, "discarded", ["same_fields"])
        connection.execute(update(schema.write_outcome).values(outcome="edited").where(*_of_run(third)))

    def listed(scope: str) -> tuple[list[str], int]:
        chosen = RunFilter(scope=scope)
        with installation_engine.connect() as connection:
            counted = runs.count_runs(connection, chosen, tables=EVERY)
        return [row.uuid for row in _page(installation_engine, chosen)], counted

    assert listed("same_fields") == ([first], 1)
    assert listed("released_only") == ([second], 1)
    assert listed("other_fields") == ([], 0)
    assert listed("Same_Fields") == ([], 0)  # no scope a rule writes
    measure_rates(installation_engine, now=NOW, window_s=7 * DAY_S)
    with installation_engine.connect() as connection:  # a scope's denominator: the EDITED runs with a scope
        counted = runs.count_runs(connection, RunFilter(counted="edited_reverted"), tables=EVERY)
    assert counted == 2


def test_a_scope_filter_before_any_derivation_matches_no_run(installation_engine: Engine) -> None:
    _plant(installation_engine)

    with installation_engine.connect() as connection:
        counted = runs.count_runs(
            connection, RunFilter(scope="reverted"), tables=Tables(outcomes=False, facts=True)
        )

    assert counted == 0


def test_a_short_id_several_runs_start_with_names_two_of_them(installation_engine: Engine) -> None:
    first, second, _ = _plant(installation_engine)
    twin = first[:8] + "-0000-4000-8000-000000000000"
    agentrun = schema.agentrun
    with installation_engine.begin() as connection:
        connection.execute(update(agentrun).where(agentrun.c.uuid == second).values(uuid=twin))

    with installation_engine.connect() as connection:
        found = runs.uuids_of(connection, first[:8])

    assert sorted(found) == sorted((first, twin))
