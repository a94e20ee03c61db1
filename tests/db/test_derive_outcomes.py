"""derive-outcomes end to end: 003_…'s classification and precedence and DESIGN.md rules 1-8, through the job.

Every installation is written with the builder; every answer is read back from our tables and
tx_nrllm_call_outcome, on SQLite, MariaDB and PostgreSQL.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import Engine, delete, event, func, select

from adapters import history as history_queries
from adapters import schema, write_targets
from adapters.database import RunrecordError, make_engine
from adapters.dialect import bulk
from adapters.dialect import session as sqlsession
from adapters.dialect.json import fields_of
from core.outcomes import RULE_VERSION, Action
from core.time import DAY_S
from data.agent_run import Run, Write
from data.builder import Installation
from data.generate import generate
from data.records import Record
from jobs.derive import Summary, derive_outcomes, summary_lines
from jobs.schema_setup import init_installation
from tests.db import derive_reference
from tests.db.conftest import ForcedPath, empty_installation

DAY = DAY_S
WINDOW = 7 * DAY
NOW = 1_790_000_000
T = NOW - 30 * DAY  # when the AI writes, unless a test says otherwise: its window closed long ago
CREATED = T - 30 * DAY  # when the written records were created


# --- building -----------------------------------------------------------------------------------------------


@contextmanager
def installation(engine: Engine) -> Iterator[Installation]:
    """An installation written with the builder, in one transaction."""
    with engine.begin() as connection:
        site = Installation(connection)
        yield site
        site.finish()


def a_page(
    site: Installation, title: str = "Produkte", *, history: bool = True, hidden: bool = False
) -> Record:
    return site.page(title, at=CREATED, history=history, hidden=hidden)


def a_run(site: Installation, *, at: int = T, uuid: str | None = None) -> Run:
    """A conversation and the run the editor's message starts, two minutes before `at`."""
    chat = site.conversation(configuration="content-assistant", at=at - 120)
    chat.user("Bitte überarbeite die Seite.", at=at - 120)
    return chat.run(uuid=uuid)


def approve_write(
    run: Run, record: Record, *, at: int, fields: tuple[str, ...] = ("title",), **approve: Any
) -> Write:
    """The model proposes a write, the editor approves it at `at`, the tool writes it."""
    run.propose("update_record", record, fields=fields)
    written = run.approve(at=at, **approve)
    assert written is not None
    return written


def end(run: Run) -> None:
    run.answer("Gespeichert.")
    run.finish()
    run.chat.close()


def a_write(site: Installation, record: Record, *, at: int = T, **approve: Any) -> tuple[Run, Write]:
    """One run that writes the record once, at `at`."""
    run = a_run(site, at=at)
    written = approve_write(run, record, at=at, **approve)
    end(run)
    return run, written


def trim_history(engine: Engine, *, before: int) -> None:
    """The installation's garbage collection: sys_history rows older than `before` are gone."""
    with engine.begin() as connection:
        connection.execute(delete(schema.sys_history).where(schema.sys_history.c.tstamp < before))


# --- deriving and reading back ------------------------------------------------------------------------------


def derive(engine: Engine, *, now: int = NOW, window_s: int = WINDOW, batch_size: int = 1_000) -> Summary:
    return derive_outcomes(engine, now=now, window_s=window_s, batch_size=batch_size)


@dataclass(frozen=True)
class Outcome:
    outcome: str
    reason: str = ""
    edit_scope: str = ""


def outcome_of(engine: Engine, written: Write) -> Outcome | None:
    table = schema.write_outcome
    with engine.connect() as connection:
        row = connection.execute(
            select(table.c.outcome, table.c.reason, table.c.edit_scope).where(
                table.c.event_uid == written.event_uid
            )
        ).one_or_none()
    return None if row is None else Outcome(*row)


def run_outcome_of(engine: Engine, run: Run) -> str | None:
    table = schema.run_outcome
    with engine.connect() as connection:
        return connection.execute(select(table.c.outcome).where(table.c.correlation_id == run.uuid)).scalar()


def call_outcomes(engine: Engine) -> list[tuple[str, str, int]]:
    table = schema.call_outcome
    with engine.connect() as connection:
        rows = connection.execute(
            select(table.c.correlation_id, table.c.outcome, table.c.tstamp).order_by(table.c.uid)
        ).all()
    return [tuple(row) for row in rows]


def count(engine: Engine, table: Any) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


ACCEPTED = Outcome("accepted_unchanged")
DISCARDED = Outcome("discarded")


def edited(scope: str) -> Outcome:
    return Outcome("edited", edit_scope=scope)


def unknown(reason: str) -> Outcome:
    return Outcome("unknown", reason=reason)


# --- every rule that one derivation can show: one installation of all its cases, derived once --------------
#
# Each case plants its own conversation and pages and says what the job must store for them; the cases share
# one installation per dialect, derived once with the defaults, and core's reference (tests/db/
# derive_reference.py) must give every case the same answer from the same rows.


@dataclass(frozen=True)
class Expect:
    """What a case expects: an outcome per write, and per run its outcome, also mirrored to nr-llm."""

    writes: tuple[tuple[Write, Outcome], ...] = ()
    runs: tuple[tuple[Run, str], ...] = ()


Plant = Callable[..., Expect]
CASES: dict[str, Callable[[Installation], Expect]] = {}


def case(*variants: Any) -> Callable[[Plant], Plant]:
    """Register a case under its function's name (a rule), once per variant when it has several."""

    def register(plant: Plant) -> Plant:
        if not variants:
            CASES[plant.__name__] = plant
        for variant in variants:
            label = "-".join(map(str, variant)) if isinstance(variant, tuple) else str(variant)
            CASES[f"{plant.__name__}[{label}]"] = functools.partial(plant, variant=variant)
        return plant

    return register


def expect_write(written: Write, outcome: Outcome) -> Expect:
    return Expect(writes=((written, outcome),))


# 003_…, "The classification"


@case()
def no_human_row_after_the_write_and_the_record_present_is_accepted_unchanged(site: Installation) -> Expect:
    run, written = a_write(site, a_page(site))
    return Expect(writes=((written, ACCEPTED),), runs=((run, "accepted_unchanged"),))


@case()
def a_human_modify_in_the_window_is_edited(site: Installation) -> Expect:
    page = a_page(site)
    run, written = a_write(site, page)
    site.human_edit(page, {"title": "von Hand"}, at=T + DAY)
    return Expect(writes=((written, edited("same_fields")),), runs=((run, "edited"),))


@case()
def a_delete_in_the_window_is_discarded(site: Installation) -> Expect:
    page = a_page(site)
    run, written = a_write(site, page)
    site.delete(page, at=T + DAY)
    return Expect(writes=((written, DISCARDED),), runs=((run, "discarded"),))


@case("deleted", "hard_deleted", "table_missing")
def a_record_that_is_gone_is_discarded(site: Installation, variant: str) -> Expect:
    if variant == "table_missing":
        _, written = a_write(site, site.missing_table_record("tx_news_domain_model_news", 77))
    else:
        record = a_page(site)
        _, written = a_write(site, record)
        site.delete(record, at=T + DAY, hard=variant == "hard_deleted")
    return expect_write(written, DISCARDED)


# 003_…, "One outcome per RUN"


def settle(site: Installation, page: Record, fate: str) -> None:
    """What the editor does to a written page so that its write ends as `fate`."""
    if fate == "edited":
        site.human_edit(page, {"description": "von Hand"}, at=T + DAY)
    elif fate == "discarded":
        site.delete(page, at=T + DAY)
    # unknown: written without its history row on a page imported without one; accepted: left alone


FATES = {
    "edited": edited("other_fields"),  # the write's field is the title
    "discarded": DISCARDED,
    "unknown": unknown("no_history_row"),
    "accepted_unchanged": ACCEPTED,
}


@case(
    ("discarded", "edited", "discarded"),
    ("edited", "discarded", "discarded"),
    ("edited", "unknown", "edited"),
    ("unknown", "edited", "edited"),
    ("unknown", "accepted_unchanged", "unknown"),
    ("accepted_unchanged", "unknown", "unknown"),
    ("discarded", "accepted_unchanged", "discarded"),
    ("accepted_unchanged", "accepted_unchanged", "accepted_unchanged"),
)
def a_run_is_recorded_by_its_worst_write(site: Installation, variant: tuple[str, str, str]) -> Expect:
    *fates, run_is = variant
    run = a_run(site)
    pages = []
    for index, fate in enumerate(fates):
        page = a_page(site, f"Seite {index}", history=fate != "unknown")
        written = approve_write(run, page, at=T + index * 60, history=fate != "unknown")
        pages.append((page, written, fate))
    end(run)
    for page, _, fate in pages:
        settle(site, page, fate)
    writes = tuple((written, FATES[fate]) for _, written, fate in pages)
    return Expect(writes=writes, runs=((run, run_is),))


# DESIGN.md rule 2: the record gone is a fact, unless its delete came after the window


@case()
def a_delete_after_the_window_does_not_make_a_run_discarded(site: Installation) -> Expect:
    page = a_page(site)
    run, written = a_write(site, page)
    site.delete(page, at=T + WINDOW + DAY)
    return Expect(writes=((written, ACCEPTED),), runs=((run, "accepted_unchanged"),))


@case()
def a_record_gone_is_discarded_even_without_evidence_of_the_write(site: Installation) -> Expect:
    page = a_page(site, history=False)
    _, written = a_write(site, page, history=False)
    site.delete(page, at=T + DAY, hard=True)
    return expect_write(written, DISCARDED)


# DESIGN.md rule 3, read with 003_… ("an older survivor answers that for a write whose own row is long
# gone"): the evidence is W's own row, a row of its editor inserted by its moment. The other cases' pages keep
# rows older than every write in sys_history: nothing of it was trimmed.


@case()
def no_retained_row_of_the_record_at_or_before_the_write_is_unknown_never_accepted_unchanged(
    site: Installation,
) -> Expect:
    page = a_page(site, history=False)  # imported: no add row
    run, written = a_write(site, page, history=False)
    return Expect(writes=((written, unknown("no_history_row")),), runs=((run, "unknown"),))


@case()
def rows_of_the_record_only_after_the_write_are_no_evidence(site: Installation) -> Expect:
    page = a_page(site, history=False)
    _, written = a_write(site, page, history=False)
    site.human_edit(page, {"title": "von Hand"}, at=T + DAY)
    return expect_write(written, unknown("no_history_row"))


@case()
def the_editors_older_row_is_taken_for_the_writes_own_when_its_save_left_none(site: Installation) -> Expect:
    _, written = a_write(site, a_page(site), history=False)  # the page's add row is the same editor's
    return expect_write(written, ACCEPTED)


@case()
def another_editors_older_row_is_no_evidence_when_the_writes_own_row_is_missing(site: Installation) -> Expect:
    page = site.page("Produkte", at=CREATED, by=7)
    run, written = a_write(site, page, history=False)
    return Expect(writes=((written, unknown("no_history_row")),), runs=((run, "unknown"),))


@case()
def a_gone_record_without_the_writes_own_row_is_discarded(
    site: Installation,
) -> Expect:
    page = site.page("Produkte", at=CREATED, by=7)
    _, written = a_write(site, page, history=False)
    site.delete(page, at=T + DAY, by=7)
    return expect_write(written, DISCARDED)


@case()
def a_write_without_its_own_row_takes_no_evidence_from_an_earlier_runs_or_editors_rows(
    site: Installation,
) -> Expect:
    page = a_page(site, hidden=True)
    _, first = a_write(site, page, at=T - 2 * DAY)
    site.human_edit(page, {"description": "von Hand"}, at=T - DAY, by=7)
    chat = site.conversation(configuration="content-assistant", at=T - 120, editor=2)
    chat.user("Bitte überarbeite die Seite.", at=T - 120)
    run = chat.run()
    second = approve_write(run, page, at=T, history=False)  # without its own row: no evidence
    end(run)
    site.set_hidden(page, False, at=T + DAY, by=7)
    return Expect(writes=((first, edited("other_fields")), (second, unknown("no_history_row"))))


@case()
def another_editors_row_stamped_two_seconds_after_a_write_without_its_own_row_is_no_evidence(
    site: Installation,
) -> Expect:
    page = a_page(site, history=False)
    _, written = a_write(site, page, history=False)
    site.human_edit(page, {"title": "von Hand"}, at=T + 2, by=7)
    return expect_write(written, unknown("no_history_row"))


@case()
def a_writes_own_row_stamped_a_second_after_the_step_is_evidence_not_a_human_edit(
    site: Installation,
) -> Expect:
    page = a_page(site, history=False)
    _, kept = a_write(site, page, history_delay=1)
    other = a_page(site, "Zweite", history=False)
    _, changed = a_write(site, other, history_delay=2, fields=("seo_title",))
    site.human_edit(other, {"seo_title": "von Hand"}, at=T + DAY)
    # The second write's own row named the field the editor changed.
    return Expect(writes=((kept, ACCEPTED), (changed, edited("same_fields"))))


@case()
def a_row_three_seconds_after_the_step_is_not_the_writes_own(site: Installation) -> Expect:
    page = a_page(site, history=False)
    _, written = a_write(site, page, history_delay=3)
    return expect_write(written, unknown("no_history_row"))


# DESIGN.md rule 4: human rows are the rows inside the window that no AI write explains


@case()
def a_human_row_within_two_seconds_of_another_runs_write_counts_as_that_write(site: Installation) -> Expect:
    page = a_page(site, history=False)
    _, written = a_write(site, page)
    _, later = a_write(site, page, at=T + DAY, history=False)
    site.human_edit(page, {"title": "von Hand"}, at=later.written_at + 2)
    return expect_write(written, ACCEPTED)


@case("window", "window+1s", "window+20d")
def only_rows_inside_the_window_count(site: Installation, variant: str) -> Expect:
    after_s, expected = {
        "window": (WINDOW, edited("same_fields")),
        "window+1s": (WINDOW + 1, ACCEPTED),
        "window+20d": (WINDOW + 20 * DAY, ACCEPTED),
    }[variant]
    page = a_page(site)
    _, written = a_write(site, page)
    site.human_edit(page, {"title": "von Hand"}, at=written.written_at + after_s)
    return expect_write(written, expected)


@case()
def a_delete_in_the_window_is_discarded_even_if_undeleted_later(site: Installation) -> Expect:
    page = a_page(site)
    _, written = a_write(site, page)
    site.delete(page, at=T + DAY)
    site.undelete(page, at=T + 2 * DAY)
    return expect_write(written, DISCARDED)


@case(Action.MOVE, Action.UNDELETE, Action.STAGE)
def move_undelete_and_stage_change_are_not_modifications(site: Installation, variant: Action) -> Expect:
    page = a_page(site)
    _, written = a_write(site, page)
    site.history(page, variant, at=T + DAY)  # type: ignore[arg-type]
    return expect_write(written, ACCEPTED)


@case()
def a_delete_outranks_a_modify_in_the_same_window(site: Installation) -> Expect:
    page = a_page(site)
    _, written = a_write(site, page)
    site.human_edit(page, {"title": "von Hand"}, at=T + DAY)
    site.delete(page, at=T + 2 * DAY)
    site.undelete(page, at=T + 3 * DAY)
    return expect_write(written, DISCARDED)


# DESIGN.md rule 6: an unreadable target is UNKNOWN and the batch goes on

BAD_TARGETS: dict[str, Any] = {
    "not JSON": "{not json",
    "a JSON array": "[1, 2]",
    "no table": {"writeTargetUid": 1},
    "no uid": {"writeTargetTable": "pages"},
    "table not an identifier": {"writeTargetTable": "pages; DROP TABLE pages", "writeTargetUid": 1},
    "table with a space": {"writeTargetTable": "pages ", "writeTargetUid": 1},
    "table too long": {"writeTargetTable": "t" * 65, "writeTargetUid": 1},
    # MariaDB keeps the batch's record names in ASCII (adapters.own_rows_scratch): none of these reaches them.
    "table beyond ASCII": {"writeTargetTable": "pagés", "writeTargetUid": 1},
    "table in another script": {"writeTargetTable": "страницы", "writeTargetUid": 1},
    "table not a string": {"writeTargetTable": ["pages"], "writeTargetUid": 1},
    "uid a string": {"writeTargetTable": "pages", "writeTargetUid": "1"},
    "uid zero": {"writeTargetTable": "pages", "writeTargetUid": 0},
    "uid negative": {"writeTargetTable": "pages", "writeTargetUid": -3},
    "uid a fraction": {"writeTargetTable": "pages", "writeTargetUid": 1.5},
    "uid too large": {"writeTargetTable": "pages", "writeTargetUid": 2**31},
    "uid huge": {"writeTargetTable": "pages", "writeTargetUid": 10**30},
    "uid true": {"writeTargetTable": "pages", "writeTargetUid": True},
    "missing table, uid zero": {"writeTargetTable": "tx_gone_table", "writeTargetUid": 0},
    "a missing table, no uid": {"writeTargetTable": "tx_gone_table"},
}


@case(*BAD_TARGETS)
def an_unreadable_write_target_is_unknown_and_the_run_never_accepted_unchanged(
    site: Installation, variant: str
) -> Expect:
    run = a_run(site)
    good = approve_write(run, a_page(site), at=T)
    broken = approve_write(run, a_page(site, "Andere"), at=T + 60, raw_target=BAD_TARGETS[variant])
    end(run)
    return Expect(
        writes=((broken, unknown("unreadable_target")), (good, ACCEPTED)),
        runs=((run, "unknown"),),
    )


# DESIGN.md rule 7: edit scope, from the keys of history_data only

SCOPES: dict[str, tuple[dict[str, Any], str]] = {
    "the written field": ({"title": "von Hand"}, "same_fields"),
    "another field": ({"description": "von Hand"}, "other_fields"),
    "the written field and another": ({"title": "von Hand", "description": "auch"}, "same_fields"),
    "hidden": ({"hidden": 0}, "released_only"),
    "hidden and tstamp": ({"hidden": 0, "tstamp": 1}, "released_only"),
    "hidden and another field": ({"hidden": 0, "description": "von Hand"}, "other_fields"),
}


@case(*SCOPES)
def edit_scope_compares_the_human_rows_fields_with_the_writes(site: Installation, variant: str) -> Expect:
    changes, scope = SCOPES[variant]
    page = a_page(site, hidden=True)
    _, written = a_write(site, page, fields=("title",))
    site.human_edit(page, changes, at=T + DAY)
    return expect_write(written, edited(scope))


@case()
def unhide_only_edits_are_edited_with_edit_scope_released_only(site: Installation) -> Expect:
    page = a_page(site, hidden=True)
    run, written = a_write(site, page)
    site.set_hidden(page, False, at=T + DAY)
    return Expect(writes=((written, edited("released_only")),), runs=((run, "edited"),))


BAD_HISTORY_DATA = {
    "not JSON": "{not json",
    "a JSON array": "[1, 2]",
    "newRecord missing": '{"oldRecord": {"title": "x"}}',
    "newRecord not an object": '{"newRecord": ["title"]}',
    "empty": "",
}


@case(*BAD_HISTORY_DATA)
def unreadable_history_data_makes_only_the_edit_scope_fields_unknown(
    site: Installation, variant: str
) -> Expect:
    page = a_page(site)
    run, written = a_write(site, page)
    site.history(page, Action.MODIFY, at=T + DAY, raw_data=BAD_HISTORY_DATA[variant])
    return Expect(writes=((written, edited("fields_unknown")),), runs=((run, "edited"),))


@case()
def the_writes_own_row_unreadable_leaves_the_written_fields_unknown(site: Installation) -> Expect:
    page = a_page(site)
    _, written = a_write(site, page, history=False)
    site.history(page, Action.MODIFY, at=written.written_at, raw_data="{not json")
    site.human_edit(page, {"description": "von Hand"}, at=T + DAY)
    return expect_write(written, edited("fields_unknown"))


Found = tuple[list[Outcome | None], list[str | None]]  # a case's writes' outcomes and its runs' outcomes


@dataclass(frozen=True)
class Derived:
    """Every case's expectation, what the job stored for it and what core's reference gives it, with the
    job's summary."""

    expected: dict[str, Expect]
    stored: dict[str, Found]
    mirrored: dict[str, list[list[tuple[str, int]]]]  # each run's observed rows in tx_nrllm_call_outcome
    reference: dict[str, Found]
    summary: Summary
    table: tuple[list[Outcome], int]  # every write row the job stored, and how many run rows


@pytest.fixture(scope="module")
def derived(_installation: Engine) -> Derived:
    """All cases planted in one installation and derived once, read back before any other test empties it."""
    engine = empty_installation(_installation)
    with installation(engine) as site:
        expected = {name: plant(site) for name, plant in CASES.items()}
    summary = derive(engine)
    stored_writes, stored_runs = derive_reference.stored(engine)
    reference_writes, reference_runs = derive_reference.reference(engine, now=NOW, window_s=WINDOW)
    c = schema.call_outcome.c
    observed: dict[str, list[tuple[str, int]]] = {}
    with engine.connect() as connection:
        for correlation, outcome, tstamp in connection.execute(select(c.correlation_id, c.outcome, c.tstamp)):
            observed.setdefault(str(correlation), []).append((str(outcome), int(tstamp)))
    return Derived(
        expected,
        {name: _found(expect, stored_writes, stored_runs) for name, expect in expected.items()},
        {name: [observed.get(run.uuid, []) for run, _ in expect.runs] for name, expect in expected.items()},
        {name: _found(expect, reference_writes, reference_runs) for name, expect in expected.items()},
        summary,
        ([Outcome(j.outcome, j.reason, j.edit_scope) for j in stored_writes.values()], len(stored_runs)),
    )


def _found(expect: Expect, writes: dict[int, derive_reference.Judged], runs: dict[int, str]) -> Found:
    """A case's writes and runs as one side (the job's rows or core's reference) judged them."""
    return (
        [_outcome(writes.get(written.event_uid)) for written, _ in expect.writes],
        [runs.get(run.uid) for run, _ in expect.runs],
    )


def _outcome(judged: derive_reference.Judged | None) -> Outcome | None:
    return None if judged is None else Outcome(judged.outcome, judged.reason, judged.edit_scope)


@pytest.mark.parametrize("rule", CASES)
def test_the_job_stores_what_each_rule_gives_its_case(derived: Derived, rule: str) -> None:
    expect = derived.expected[rule]

    assert derived.stored[rule] == (
        [outcome for _, outcome in expect.writes],
        [run_is for _, run_is in expect.runs],
    )
    assert derived.mirrored[rule] == [[(run_is, NOW)] for _, run_is in expect.runs]


@pytest.mark.parametrize("rule", CASES)
def test_core_gives_each_case_what_the_rule_gives_it(derived: Derived, rule: str) -> None:
    expect = derived.expected[rule]

    assert derived.reference[rule] == (
        [outcome for _, outcome in expect.writes],
        [run_is for _, run_is in expect.runs],
    )


def test_every_case_gets_its_outcome_on_the_ways_only_a_larger_batch_takes(
    _installation: Engine, forced_path: ForcedPath
) -> None:
    engine = empty_installation(_installation)
    with installation(engine) as site:
        expected = {name: plant(site) for name, plant in CASES.items()}
    derive(engine)
    stored_writes, stored_runs = derive_reference.stored(engine)

    found = {name: _found(expect, stored_writes, stored_runs) for name, expect in expected.items()}
    assert found == {
        name: ([outcome for _, outcome in expect.writes], [run_is for _, run_is in expect.runs])
        for name, expect in expected.items()
    }
    assert forced_path.batches > 0


def test_the_summary_counts_the_runs_writes_reasons_and_edit_scopes_the_job_stored(derived: Derived) -> None:
    writes, runs = derived.table
    summary = derived.summary

    assert (summary.runs_derived, summary.writes_derived) == (runs, len(writes))
    assert {reason: n for reason, n in summary.unknown_by_reason.items() if n} == Counter(
        write.reason for write in writes if write.outcome == "unknown"
    )
    assert {scope: n for scope, n in summary.edit_scope.items() if n} == Counter(
        write.edit_scope for write in writes if write.outcome == "edited"
    )


# --- 003_…, rule 3's history_trimmed: sys_history trimmed past the write ------------------------------------
def test_history_trimmed_past_the_write_is_unknown(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        run, written = a_write(site, a_page(site))
    trim_history(installation_engine, before=T + 1)

    derive(installation_engine)

    assert outcome_of(installation_engine, written) == unknown("history_trimmed")
    assert run_outcome_of(installation_engine, run) == "unknown"


@pytest.mark.parametrize(("oldest", "reason"), [(T + 1, "history_trimmed"), (T, "no_history_row")])
def test_without_evidence_the_oldest_row_of_sys_history_says_whether_it_was_trimmed(
    installation_engine: Engine, oldest: int, reason: str
) -> None:
    with installation(installation_engine) as site:
        other = a_page(site, "Andere Seite")
        site.human_edit(other, {"title": "x"}, at=oldest)
        page = a_page(site, history=False)
        _, written = a_write(site, page, history=False)
    trim_history(installation_engine, before=oldest)

    derive(installation_engine)

    assert outcome_of(installation_engine, written) == unknown(reason)


# --- DESIGN.md rule 1: a run is derived once the window of its LAST write has closed ------------------------


def test_a_run_waits_for_the_window_of_its_last_write(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        run = a_run(site)
        approve_write(run, a_page(site, "Erste"), at=T)
        last = approve_write(run, a_page(site, "Zweite"), at=T + 3 * DAY)
        end(run)

    waiting = derive(installation_engine, now=T + WINDOW + DAY)
    done = derive(installation_engine, now=last.written_at + WINDOW + 1)

    assert (waiting.runs_derived, waiting.runs_inside_window) == (0, 1)
    assert (done.runs_derived, done.runs_inside_window) == (1, 0)
    assert run_outcome_of(installation_engine, run) == "accepted_unchanged"


def set_status(engine: Engine, run: Run, status: str) -> None:
    with engine.begin() as connection:
        connection.execute(
            schema.agentrun.update().where(schema.agentrun.c.uuid == run.uuid).values(status=status)
        )


@pytest.mark.parametrize("status", ["queued", "running", "waiting_for_approval", "waiting_for_input"])
def test_a_run_not_finished_is_not_derived_however_old_its_writes_are(
    installation_engine: Engine, status: str
) -> None:
    # Rule 1 waits for the LAST write: a run that may still write has not made it.
    with installation(installation_engine) as site:
        run, written = a_write(site, a_page(site))
    set_status(installation_engine, run, status)

    early = derive(installation_engine)
    before = outcome_of(installation_engine, written)
    set_status(installation_engine, run, "completed")
    ended = derive(installation_engine)

    assert (early.runs_derived, early.runs_unfinished, early.runs_due) == (0, 1, 0)
    assert before is None
    assert (ended.runs_derived, ended.runs_unfinished) == (1, 0)
    assert run_outcome_of(installation_engine, run) == "accepted_unchanged"


@pytest.mark.parametrize("status", ["paused", ""])
def test_a_run_whose_status_nr_llm_does_not_write_is_not_derived_and_is_named_in_the_summary(
    installation_engine: Engine, status: str
) -> None:
    with installation(installation_engine) as site:
        run, written = a_write(site, a_page(site))
        a_write(site, a_page(site, "Zweite"))
    set_status(installation_engine, run, status)

    summary = derive(installation_engine)

    assert (summary.runs_derived, summary.runs_unfinished, summary.runs_unknown_status) == (1, 1, 1)
    assert outcome_of(installation_engine, written) is None
    assert summary_lines(summary)[-2] == (
        "  runs not finished yet (running or waiting; derived once they end): 1 (1 of them with a status "
        "nr-llm does not write: never derived while it stays)"
    )


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_a_completed_failed_or_cancelled_run_is_derived_once_its_window_closed(
    installation_engine: Engine, status: str
) -> None:
    with installation(installation_engine) as site:
        run, _ = a_write(site, a_page(site))
    set_status(installation_engine, run, status)

    summary = derive(installation_engine)

    assert (summary.runs_derived, summary.runs_unfinished) == (1, 0)


def test_a_run_whose_window_closes_at_now_is_not_due_until_the_second_after(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        run, written = a_write(site, a_page(site))

    at_close = derive(installation_engine, now=written.written_at + WINDOW)
    after = derive(installation_engine, now=written.written_at + WINDOW + 1)

    assert at_close.runs_derived == 0 and at_close.runs_inside_window == 1
    assert after.runs_derived == 1
    with installation_engine.connect() as connection:
        stored = connection.execute(select(schema.run_outcome)).one()
    assert (stored.last_write_at, stored.window_s) == (written.written_at, WINDOW)


def test_a_derived_row_is_final_and_never_rewritten(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        run, written = a_write(site, page)
        site.human_edit(page, {"title": "von Hand"}, at=T + 10 * DAY)  # outside 7 days, inside 14

    first = derive(installation_engine, window_s=WINDOW)
    again = derive(installation_engine, now=NOW + DAY, window_s=14 * DAY)

    assert (first.runs_derived, again.runs_derived) == (1, 0)
    assert outcome_of(installation_engine, written) == ACCEPTED
    assert call_outcomes(installation_engine) == [(run.uuid, "accepted_unchanged", NOW)]


# --- DESIGN.md rule 4: a later AI write, its window still open ----------------------------------------------


def test_a_later_ai_write_is_not_a_human_edit(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        first, written = a_write(site, page)
        second, _ = a_write(site, page, at=T + DAY, fields=("description",))

    # The second run's window is still open: it is not derived, and its write still explains its row.
    summary = derive(installation_engine, now=T + WINDOW + 1)

    assert summary.runs_derived == 1 and summary.runs_inside_window == 1
    assert outcome_of(installation_engine, written) == ACCEPTED
    assert run_outcome_of(installation_engine, second) is None


# --- DESIGN.md rule 6: table names reach SQL only after they matched ----------------------------------------


def test_a_table_name_reaches_sql_only_after_it_matched_the_databases_own_tables(
    installation_engine: Engine,
) -> None:
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    with installation(installation_engine) as site:
        run = a_run(site)
        approve_write(run, site.missing_table_record("tx_news_domain_model_news", 7), at=T)
        approve_write(
            run,
            a_page(site),
            at=T + 60,
            raw_target={"writeTargetTable": "pages; DROP TABLE pages", "writeTargetUid": 1},
        )
        end(run)
    event.listen(installation_engine, "before_cursor_execute", record)
    try:
        derive(installation_engine)
    finally:
        event.remove(installation_engine, "before_cursor_execute", record)

    assert run_outcome_of(installation_engine, run) == "discarded"
    assert not [s for s in statements if "tx_news_domain_model_news" in s or "DROP TABLE pages" in s]
    assert [
        s for s in statements if "FROM pages" in s.replace('"', "").replace("`", "")
    ] == []  # no page written


# --- DESIGN.md rule 7: only the keys of history_data are read -----------------------------------------------


def test_only_the_keys_of_history_data_leave_the_database_never_its_values(
    installation_engine: Engine,
) -> None:
    secret = "Vertraulicher Entwurf 4711"
    with installation(installation_engine) as site:
        page = a_page(site)
        _, written = a_write(site, page, changes={"title": secret})
        site.human_edit(page, {"description": secret}, at=T + DAY)

    with installation_engine.connect() as connection:
        query = history_queries.history_query(
            connection.dialect.name, {"pages": {page.uid}}, keys_from=0, keys_to=NOW
        )
        rows = [tuple(row) for row in connection.execute(query)]

    assert len(rows) == 3
    assert secret not in repr(rows)
    assert {fields_of(row[-1]) for row in rows} == {
        frozenset({"pid", "title", "tstamp", "crdate", "description", "hidden"}),
        frozenset({"title"}),
        frozenset({"description"}),
    }


# --- DESIGN.md rule 8, and the rows the job writes ----------------------------------------------------------


def test_every_derived_row_carries_the_rule_version(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        a_write(site, a_page(site))

    derive(installation_engine)

    with installation_engine.connect() as connection:
        versions = {
            *connection.execute(select(schema.write_outcome.c.rule_version)).scalars(),
            *connection.execute(select(schema.run_outcome.c.rule_version)).scalars(),
        }
    assert versions == {RULE_VERSION}


def test_the_observed_row_carries_the_runs_uuid_as_correlation_id(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        run, written = a_write(site, page)
        site.human_edit(page, {"title": "von Hand"}, at=T + DAY)

    derive(installation_engine)

    with installation_engine.connect() as connection:
        write_row = connection.execute(select(schema.write_outcome)).one()
        run_row = connection.execute(select(schema.run_outcome)).one()
    assert call_outcomes(installation_engine) == [(run.uuid, "edited", NOW)]
    assert (write_row.run_uid, write_row.correlation_id, write_row.tablename, write_row.recuid) == (
        run.uid,
        run.uuid,
        "pages",
        page.uid,
    )
    assert (write_row.written_at, write_row.first_change_after_s) == (
        written.written_at,
        T + DAY - written.written_at,
    )
    assert (run_row.writes, run_row.configuration_identifier, run_row.derived_at) == (
        1,
        "content-assistant",
        NOW,
    )


# --- the job: excluded in the query, safe to repeat, safe to stop -------------------------------------------


def runs_a_day_apart(site: Installation, how_many: int, *, first: int) -> list[Run]:
    runs = []
    for index in range(how_many):
        run, _ = a_write(site, a_page(site, f"Seite {index}"), at=first + index * DAY)
        runs.append(run)
    return runs


def test_an_already_answered_run_is_excluded_by_the_query(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        old = runs_a_day_apart(site, 4, first=T - 10 * DAY)
        new = runs_a_day_apart(site, 3, first=T + 10 * DAY)
    derive(installation_engine, now=T + WINDOW, batch_size=2)  # only the old runs are due then

    with installation_engine.begin() as connection:
        # Pending rows the answered runs left behind (as a concurrent job can): the page must skip them.
        old_rows = [(run.uid, T, 1) for run in old]
        bulk.insert_rows(connection, schema.pending_run, ("run_uid", "last_write_at", "writes"), old_rows)
        query = write_targets.due_page_query(connection.dialect.name, after=0, cutoff=NOW - WINDOW, limit=2)
        first_page = connection.execute(query).all()
    summary = derive(installation_engine, batch_size=2)

    # A full page of answered runs (the four old ones) comes first by uid: the query must skip it.
    assert [row.run_uid for row in first_page] == [run.uid for run in new[:2]]
    assert summary.runs_derived == 3
    assert all(run_outcome_of(installation_engine, run) == "accepted_unchanged" for run in old + new)


def test_running_the_job_twice_writes_each_row_once(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        runs_a_day_apart(site, 5, first=T - 5 * DAY)

    first = derive(installation_engine, batch_size=2)
    second = derive(installation_engine, batch_size=2)

    assert (first.runs_derived, second.runs_derived) == (5, 0)
    assert count(installation_engine, schema.run_outcome) == 5
    assert count(installation_engine, schema.write_outcome) == 5
    assert count(installation_engine, schema.call_outcome) == 5


def test_without_a_batch_size_a_batch_holds_the_dialects_default_of_runs(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's batches hold more runs than the servers' (sqlsession.batch_runs): here 3 and 2."""
    monkeypatch.setattr(sqlsession, "SQLITE_BATCH_RUNS", 3)
    monkeypatch.setattr(sqlsession, "BATCH_RUNS", 2)
    with installation(installation_engine) as site:
        runs_a_day_apart(site, 6, first=T - 6 * DAY)

    summary = derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    expected = 3 if installation_engine.dialect.name == "sqlite" else 2
    assert summary.runs_derived == 6
    assert summary.batches == 6 // expected


class CrashError(RuntimeError):
    pass


def test_a_crash_between_batches_loses_nothing_and_the_next_run_continues(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        runs = runs_a_day_apart(site, 7, first=T - 7 * DAY)

    def crash_after_two_batches(done: int, total: int) -> None:
        if done >= 4:
            raise CrashError("killed")

    with pytest.raises(CrashError):
        derive_outcomes(
            installation_engine, now=NOW, window_s=WINDOW, batch_size=2, progress=crash_after_two_batches
        )
    derived_before = count(installation_engine, schema.run_outcome)
    summary = derive(installation_engine, batch_size=2)

    assert derived_before == 4
    assert summary.runs_derived == 3
    assert sorted(uuid for uuid, _, _ in call_outcomes(installation_engine)) == sorted(
        run.uuid for run in runs
    )


def test_explicit_ratings_are_never_touched_and_never_counted(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        rated, _ = a_write(site, a_page(site))
        rated.call_outcome("helpful", at=T + 600)
        only_rated = a_run(site)  # a run that wrote nothing, rated not_helpful
        end(only_rated)
        only_rated.call_outcome("not_helpful", at=T + 700)

    summary = derive(installation_engine)

    assert call_outcomes(installation_engine) == [
        (rated.uuid, "helpful", T + 600),
        (only_rated.uuid, "not_helpful", T + 700),
        (rated.uuid, "accepted_unchanged", NOW),
    ]
    assert summary.runs_derived == 1 and summary.mirrored == 1


def test_an_observed_row_already_written_by_nr_llm_is_left_as_it_is(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        run, _ = a_write(site, page)
        site.human_edit(page, {"title": "von Hand"}, at=T + DAY)
        run.call_outcome("accepted_unchanged", at=T + 2 * DAY)  # nr-llm's own deriver, by its own rules

    summary = derive(installation_engine)

    assert call_outcomes(installation_engine) == [(run.uuid, "accepted_unchanged", T + 2 * DAY)]
    assert run_outcome_of(installation_engine, run) == "edited"
    assert (summary.mirrored, summary.not_mirrored) == (0, 1)


def test_a_run_without_uuid_is_reported_and_skipped(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        nameless = a_run(site, uuid="")
        approve_write(nameless, a_page(site, "Ohne"), at=T)
        end(nameless)
        named, _ = a_write(site, a_page(site, "Mit"), at=T + 60)

    summary = derive(installation_engine)

    assert (summary.runs_without_uuid, summary.runs_derived) == (1, 1)
    assert run_outcome_of(installation_engine, named) == "accepted_unchanged"
    assert count(installation_engine, schema.run_outcome) == 1


# --- the command --------------------------------------------------------------------------------------------


def iso(unix: int) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat()


def test_the_command_prints_the_summary(
    installation_url: str, installation_engine: Engine, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        a_write(site, page)
        site.human_edit(page, {"title": "von Hand"}, at=T + DAY)
        a_write(site, a_page(site, "Neu"), at=NOW - DAY)

    result = run_cli("derive-outcomes", "--db", installation_url, "--now", iso(NOW))

    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # no progress bar on a pipe
    assert "derived 1 runs and 1 writes" in result.stdout
    assert "runs:   discarded 0, edited 1, unknown 0, accepted_unchanged 0" in result.stdout
    assert "runs still inside their window: 1" in result.stdout


def test_the_command_prints_json(
    installation_url: str, installation_engine: Engine, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        a_write(site, a_page(site), raw_target="{not json")

    result = run_cli(
        "derive-outcomes", "--db", installation_url, "--now", iso(NOW), "--json", "--window-days", "3"
    )

    summary = json.loads(result.stdout)
    assert summary["runs"]["by_outcome"] == {
        "discarded": 0,
        "edited": 0,
        "unknown": 1,
        "accepted_unchanged": 0,
    }
    assert summary["writes"]["unknown_by_reason"]["unreadable_target"] == 1
    assert summary["window_s"] == 3 * DAY
    assert summary["seconds"] >= 0


@pytest.mark.parametrize(
    ("args", "exit_code", "said"),
    [
        (("--window-days", "0"), 2, "Invalid value for '--window-days'"),
        (("--batch-size", "0"), 2, "Invalid value for '--batch-size'"),
        (("--now", "yesterday"), 1, "--now is not an ISO 8601 date or time: 'yesterday'"),
    ],
)
def test_the_command_refuses_bad_options_in_one_line(
    installation_url: str, run_cli: Callable[..., Result], args: tuple[str, str], exit_code: int, said: str
) -> None:
    result = run_cli("derive-outcomes", "--db", installation_url, *args)

    assert result.exit_code == exit_code
    assert "Traceback" not in result.output + result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("runrecord: error:"), result.stderr
    assert said in result.stderr


def test_the_command_records_its_run_in_the_job_log_as_the_scheduler_does(
    installation_url: str, installation_engine: Engine, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        a_write(site, a_page(site))
        a_write(site, a_page(site, "Neu"), at=NOW - DAY)

    result = run_cli("derive-outcomes", "--db", installation_url, "--now", iso(NOW))

    assert result.exit_code == 0, result.stderr
    with installation_engine.connect() as connection:
        [row] = connection.execute(select(schema.job_run)).mappings().all()
    assert (row["job"], row["status"], row["processed"], row["failed"]) == ("derive-outcomes", "ok", 1, 0)
    assert row["message"] == "1 runs and 1 writes derived, 1 runs still inside their window"
    assert row["finished"] >= row["started"] and row["duration_ms"] >= 0


def test_a_command_that_fails_is_recorded_as_failed_and_said_in_one_line(
    installation_url: str,
    installation_engine: Engine,
    run_cli: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: object, **_kwargs: object) -> Summary:
        raise RunrecordError("the batch could not be read")

    monkeypatch.setattr("jobs.derive.derive_outcomes", broken)

    result = run_cli("derive-outcomes", "--db", installation_url, "--now", iso(NOW))

    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "derive-outcomes" in result.stderr
    assert result.stderr.rstrip().endswith("failed: the batch could not be read")
    with installation_engine.connect() as connection:
        rows = connection.execute(select(schema.job_run.c.job, schema.job_run.c.status)).all()
    assert [tuple(r) for r in rows] == [("derive-outcomes", "failed")]


# --- done when: the demo reads back as the generator planted it ---------------------------------------------


DEMO_NOW = datetime(2026, 11, 29, tzinfo=UTC)


def test_on_the_demo_every_run_and_write_matches_what_the_generator_planted(
    empty_db_url: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    manifest = tmp_path / "demo.manifest.json"
    generate(
        empty_db_url,
        create_tables=init_installation,
        conversations=400,
        seed=11,
        now=DEMO_NOW,
        manifest=manifest,
    )

    result = run_cli(
        "derive-outcomes", "--db", empty_db_url, "--now", DEMO_NOW.isoformat(), "--json", "--batch-size", "50"
    )

    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    planted = json.loads(manifest.read_text(encoding="utf-8"))
    runs = [
        json.loads(line)
        for line in (tmp_path / planted["runs_file"]).read_text(encoding="utf-8").splitlines()
    ]
    expected_runs = {run["run"]: run["outcome"] for run in runs if run["due"] and run["writes"]}
    expected_writes = {
        write["event"]: Outcome(write["outcome"], write["reason"], write["edit_scope"])
        for run in runs
        if run["due"]
        for write in run["writes"]
    }
    engine = make_engine(empty_db_url)
    with engine.connect() as connection:
        got_runs = dict(
            connection.execute(
                select(schema.run_outcome.c.correlation_id, schema.run_outcome.c.outcome)
            ).all()
        )
        got_writes = {
            row.event_uid: Outcome(row.outcome, row.reason, row.edit_scope)
            for row in connection.execute(select(schema.write_outcome))
        }
        mirrored = dict(
            connection.execute(
                select(schema.call_outcome.c.correlation_id, schema.call_outcome.c.outcome)
            ).all()
        )
    engine.dispose()
    assert got_runs == expected_runs
    assert got_writes == expected_writes
    assert mirrored == expected_runs
    summary = planted["summary"]
    assert {k: v for k, v in printed["runs"]["by_outcome"].items() if v} == summary["runs_by_outcome"]
    assert {k: v for k, v in printed["writes"]["by_outcome"].items() if v} == summary["writes_by_outcome"]
    assert {k: v for k, v in printed["writes"]["unknown_by_reason"].items() if v} == summary[
        "unknown_by_reason"
    ]
    assert printed["runs"]["inside_window"] == summary["runs_inside_window"]
