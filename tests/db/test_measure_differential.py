"""The SQL path of measure-rates (adapters.measure_batch) against core's Python functions, on every dialect.

On a generated installation and on hypothesis-built conversations (payloads that are not JSON or no object,
roles, contents, segments, notices and run uuids of every kind, run records with unreadable entries, runs
that waited, "go on" messages inside and outside a wait), the facts measure-rates stores equal those
core.facts gives for every run and answer (tests/db/measure_reference.py), and so do the rates.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, insert, select, update

from adapters import schema, tallies
from adapters.database import make_engine
from core.counting import SCOPE_PRECEDENCE, edited_tallies
from core.outcomes import CallOutcome
from core.periods import Grain
from core.time import DAY_S
from data.generate import generate
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.schema_setup import init_installation
from tests.db.measure_reference import edited_writes, reference_facts, reference_rates, stored_facts
from tests.db.test_measure_rates import rates

WINDOW = 7 * DAY_S
NOW = datetime(2026, 12, 1, tzinfo=UTC)
T0 = int(datetime(2026, 11, 20, tzinfo=UTC).timestamp())


def agree_with_core(engine: Engine, now: int) -> None:
    with engine.connect() as connection:
        expected = reference_facts(connection)
        found = stored_facts(connection)
        different = {
            key: (found.get(key), expected.get(key))
            for key in set(found) | set(expected)
            if found.get(key) != expected.get(key)
        }
        assert different == {}
        for grain in Grain:
            assert rates(engine, grain) == reference_rates(
                connection, expected, grain, now=now, window_s=WINDOW
            )


def test_the_sql_path_gives_every_fact_and_rate_core_gives_on_a_generated_installation(
    empty_db_url: str, tmp_path: Path
) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=400, seed=3, now=NOW)
    engine = make_engine(empty_db_url)
    now = int(NOW.timestamp())
    try:
        derive_outcomes(engine, now=now, window_s=WINDOW)
        measure_rates(engine, now=now, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY), batch_size=150)

        agree_with_core(engine, now)
    finally:
        engine.dispose()


def test_the_database_gives_each_edited_run_the_first_scope_of_its_edited_writes_as_core_does(
    empty_db_url: str,
) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=150, seed=5, now=NOW)
    engine = make_engine(empty_db_url)
    now = int(NOW.timestamp())
    # Every write of an EDITED run made EDITED or not, with any scope, one no version knows, or none: runs
    # with several EDITED writes of different scopes, and runs without one.
    scopes = [scope.value for scope in SCOPE_PRECEDENCE] + ["later_scope", "", "Same_Fields", "reverted "]
    outcomes = [CallOutcome.EDITED.value, CallOutcome.ACCEPTED_UNCHANGED.value]
    rng = random.Random(5)
    try:
        derive_outcomes(engine, now=now, window_s=WINDOW)
        measure_rates(engine, now=now, window_s=WINDOW, grains=(Grain.WEEK,))
        w, o = schema.write_outcome.c, schema.run_outcome.c
        with engine.begin() as connection:
            edited_runs = select(o.run_uid).where(o.outcome == CallOutcome.EDITED.value)
            uids = connection.execute(select(w.uid).where(w.run_uid.in_(edited_runs))).scalars().all()
            for uid in uids:
                changed = {"outcome": rng.choice(outcomes), "edit_scope": rng.choice(scopes)}
                connection.execute(update(schema.write_outcome).where(w.uid == uid).values(changed))
        with engine.connect() as connection:
            for grain in Grain:
                found = tallies.edited_tallies(connection, grain, open_from=None, periods=())
                writes = edited_writes(connection, grain)  # the same writes at either grain
                expected = edited_tallies(writes)
                assert sorted(found, key=repr) == sorted(expected, key=repr)
        assert len(uids) > 20 and len({tally.scope for tally in expected}) == len(SCOPE_PRECEDENCE) + 1
        known = {scope.value for scope in SCOPE_PRECEDENCE}
        scopes_of_run: dict[int, set[str]] = {}
        for write in writes:
            if write.edit_scope in known:
                scopes_of_run.setdefault(write.run_uid, set()).add(write.edit_scope)
        assert any(len(scopes) > 1 for scopes in scopes_of_run.values())  # precedence decides somewhere
    finally:
        engine.dispose()


def test_the_open_periods_alone_are_counted_as_the_same_periods_of_every_count(empty_db_url: str) -> None:
    """A rerun counts only the periods from the first open one on (and those listed): their derived and
    EDITED runs are read from those facts first, and count as in the tallies of every period."""
    generate(empty_db_url, create_tables=init_installation, conversations=150, seed=7, now=NOW)
    engine = make_engine(empty_db_url)
    now = int(NOW.timestamp())
    try:
        derive_outcomes(engine, now=now, window_s=WINDOW)
        measure_rates(engine, now=now, window_s=WINDOW, grains=(Grain.WEEK,))
        with engine.connect() as connection:
            for grain in Grain:
                every: dict[str, Any] = {"open_from": None, "periods": ()}
                all_outcomes = tallies.outcome_tallies(connection, grain, **every)
                all_edited = tallies.edited_tallies(connection, grain, **every)
                periods = sorted({tally.period for tally in all_outcomes})
                assert len(periods) > 2 and {tally.period for tally in all_edited}
                for first_open in (periods[0], periods[len(periods) // 2], periods[-1]):
                    for listed in ((), (periods[0],)):
                        chosen = {"open_from": first_open, "periods": listed}
                        found = tallies.outcome_tallies(connection, grain, **chosen)
                        assert _sorted(found) == _counted(all_outcomes, first_open, listed)
                        found_edited = tallies.edited_tallies(connection, grain, **chosen)
                        assert _sorted(found_edited) == _counted(all_edited, first_open, listed)
    finally:
        engine.dispose()


def _sorted(found: Any) -> list[Any]:
    return sorted(found, key=repr)


def _counted(every: Any, first_open: date, listed: tuple[date, ...]) -> list[Any]:
    """The tallies of the periods from `first_open` on and of the `listed` ones."""
    return _sorted(t for t in every if t.period >= first_open or t.period in listed)


# --- hypothesis-built conversations --------------------------------------------------------------------

TEXTS = (
    "Erledigt! Ich habe die Überschrift geändert.",
    "Ich habe nichts gespeichert.",
    "Nothing was changed.",
    "Hier ist ein Vorschlag.",
    "Der Titel wurde nicht aktualisiert, sondern gelöscht.",
    "weiter",
    "Bitte weiter!",
    "go on",
    "habe alles freigegeben",
    "Kannst du die Seite ändern?",
    "",
)
STATUSES = ("completed", "failed", "cancelled", "waiting_for_approval", "waiting_for_input", "running")
BROKEN = ("{broken", "[1, 2]", '"text"', "{}", "{broken}", "null", "42")


def _content() -> st.SearchStrategy[Any]:
    part = st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.sampled_from(TEXTS)}),
        st.fixed_dictionaries({"type": st.just("image"), "url": st.just("data:,x")}),
        st.just("loose"),
    )
    return st.one_of(st.sampled_from(TEXTS), st.lists(part, max_size=3), st.just(7), st.none())


def _optional(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(...), st.none(), value)


def _segment() -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(0, 3), st.just(1.5), st.just(2.0), st.just("1"), st.just(True))


@st.composite
def _message(draw: st.DrawFn, uuids: list[str]) -> tuple[str, str]:
    column_role = draw(st.sampled_from(("user", "assistant", "tool")))
    if draw(st.integers(0, 9)) == 0:
        return column_role, draw(st.sampled_from(BROKEN))
    payload: dict[str, Any] = {}
    role = draw(st.one_of(st.just(column_role), st.sampled_from(("user", "assistant", "Assistant", 3))))
    fields = {
        "role": st.just(role),
        "content": _content(),
        "runUuid": st.one_of(st.sampled_from(uuids), st.just("gone-run"), st.just(5))
        if uuids
        else st.just(...),
        "segment": _segment(),
        "notice": st.sampled_from(("nothingSaved", "runFinishedOutside", "other", 1)),
    }
    for key, strategy in fields.items():
        value = draw(_optional(strategy)) if key != "role" else draw(st.one_of(st.just(...), strategy))
        if value is not ...:
            payload[key] = value
    return column_role, json.dumps(payload, ensure_ascii=False)


@st.composite
def _entry(draw: st.DrawFn, uuids: list[str]) -> Any:
    if draw(st.integers(0, 7)) == 0:
        return draw(st.sampled_from(("text", 3, None, [])))
    entry: dict[str, Any] = {
        "runUuid": draw(st.one_of(st.sampled_from(uuids or ["gone-run"]), st.just(""), st.just(4))),
        "segment": draw(_segment()),
        "position": draw(st.one_of(st.integers(0, 8), st.none(), st.just(-1))),
        "ended": draw(st.sampled_from(("completed", "waiting", "done"))),
        "writes": draw(
            st.one_of(
                st.none(),
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "record": st.sampled_from(("pages:1", "unreadable", "pages:0", "tt-content:3")),
                            "completeness": st.sampled_from((None, "complete", "partly")),
                        }
                    ),
                    max_size=2,
                ),
                st.just("pages:1"),
            )
        ),
        "tools": draw(
            st.lists(
                st.fixed_dictionaries({"name": st.sampled_from(("get_page", 3)), "calls": st.integers(0, 2)}),
                max_size=2,
            )
        ),
        "waiting": draw(st.sampled_from(([], [{"tool": "x"}], [{"tool": None}]))),
        "decision": draw(st.sampled_from((None, {"tool": "x", "answer": "Übernehmen"}, {"tool": "x"}))),
        "undecided": draw(st.sampled_from((None, {"kind": "card", "by": "new_message"}, {"kind": "x"}))),
    }
    return entry


@st.composite
def _record(draw: st.DrawFn, uuids: list[str]) -> str | None:
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return None
    if choice == 1:
        return draw(st.sampled_from(("", "  ", "{this is not json", '{"a": 1}')))
    return json.dumps(draw(st.lists(_entry(uuids), max_size=4)))


EVENT_KINDS = ("llm", "tool", "tool_write", "approval", "input", "context")


@st.composite
def _run(draw: st.DrawFn) -> dict[str, Any]:
    events = []
    for kind in draw(st.lists(st.sampled_from(EVENT_KINDS), max_size=7)):
        payload: dict[str, Any] = {"kind": kind, "round": 1, "durationMs": draw(st.sampled_from((0.0, 12.5)))}
        if kind in ("tool", "tool_write"):
            payload["toolName"] = draw(st.sampled_from(("update_page", "get_page", "chat_set_progress")))
            payload["toolIsError"] = draw(st.booleans())
        if kind == "tool_write":
            payload |= {"writeTargetTable": "pages", "writeTargetUid": 1}
        if kind == "approval":
            payload = {"approved": draw(st.booleans()), "decidedBy": 1}
        text = json.dumps(payload) if draw(st.integers(0, 12)) else "{not json"
        events.append((kind, text, draw(st.integers(0, 1))))
    return {
        "status": draw(st.sampled_from(STATUSES)),
        "events": events,
        "finished": draw(st.booleans()),
    }


@st.composite
def _conversation(draw: st.DrawFn) -> dict[str, Any]:
    runs = draw(st.lists(_run(), max_size=3))
    uuids = [f"run-{index}" for index in range(len(runs))]
    return {
        "runs": runs,
        "messages": draw(st.lists(_message(uuids), max_size=7)),
        "record": draw(_record(uuids)),
        "approval": draw(st.one_of(st.just(""), st.sampled_from(uuids))) if uuids else "",
        "skill": draw(st.sampled_from(("", "seo-check"))),
        "spacing": draw(st.integers(1, 400)),
    }


TABLES = (
    schema.measure_fact,
    schema.measure_mark,
    schema.rate,
    schema.message,
    schema.conversation,
    schema.agentrun_event,
    schema.agentrun,
)


def _write(engine: Engine, conversations: list[dict[str, Any]]) -> None:
    """The conversations as rows: runs start and events follow in time, messages are spread over the same
    time, so that messages fall inside and outside the waits."""
    with engine.begin() as connection:
        for table in TABLES:
            connection.execute(delete(table))
        run_uid = event_uid = message_uid = 0
        for number, chat in enumerate(conversations, start=1):
            at = T0 + number * 10_000
            uids: dict[str, int] = {}
            for index, run in enumerate(chat["runs"]):
                run_uid += 1
                uuid = f"{number}-run-{index}"
                uids[f"run-{index}"] = run_uid
                started = at + index * chat["spacing"]
                for sequence, (kind, payload, late) in enumerate(run["events"]):
                    event_uid += 1
                    connection.execute(
                        insert(schema.agentrun_event).values(
                            uid=event_uid,
                            run=run_uid,
                            sequence=sequence,
                            kind=kind,
                            round=1,
                            duration_ms=0,
                            payload=payload,
                            crdate=started + 60 * sequence + 30 * late,
                        )
                    )
                ended = started + 60 * len(run["events"])
                connection.execute(
                    insert(schema.agentrun).values(
                        uid=run_uid,
                        uuid=uuid,
                        status=run["status"],
                        configuration_identifier="content-assistant",
                        started_at=started,
                        finished_at=ended if run["finished"] else 0,
                        tstamp=ended,
                        crdate=started,
                    )
                )
            rename = {f'"run-{index}"': f'"{number}-run-{index}"' for index in range(len(chat["runs"]))}
            record = chat["record"]
            for old, new in rename.items():
                record = None if record is None else record.replace(old, new)
            connection.execute(
                insert(schema.conversation).values(
                    uid=number,
                    skill_identifier=chat["skill"],
                    approval_run_uuid=rename.get(f'"{chat["approval"]}"', '""')[1:-1],
                    run_record=record,
                    crdate=at,
                    tstamp=at,
                )
            )
            for sorting, (role, payload) in enumerate(chat["messages"]):
                message_uid += 1
                for old, new in rename.items():
                    payload = payload.replace(old, new)
                connection.execute(
                    insert(schema.message).values(
                        uid=message_uid,
                        conversation=number,
                        sorting=sorting,
                        role=role,
                        payload=payload,
                        crdate=at + sorting * chat["spacing"] // 2,
                    )
                )


# The rules are the same SQL on every dialect, spelled differently only where adapters/dialect says so, and
# every example reaches those spellings: SQLite, the quickest, draws the most examples.
EDGE_EXAMPLES = {"sqlite": 30, "mariadb": 10, "postgresql": 10}


def test_the_sql_path_gives_every_fact_core_gives_on_edge_cases(
    installation_engine: Engine, dialect: str
) -> None:
    @settings(
        max_examples=EDGE_EXAMPLES[dialect],
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(conversations=st.lists(_conversation(), min_size=1, max_size=5))
    def agrees(conversations: list[dict[str, Any]]) -> None:
        _write(installation_engine, conversations)
        now = int(NOW.timestamp())
        measure_rates(
            installation_engine, now=now, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY), batch_size=2
        )
        agree_with_core(installation_engine, now)

    agrees()


@pytest.mark.parametrize("batch_size", [1, 3])
def test_a_run_two_conversations_name_counts_at_the_later_one_whatever_the_batches(
    installation_engine: Engine, batch_size: int
) -> None:
    shared = {"status": "completed", "events": [("llm", '{"kind": "llm"}', 0)], "finished": True}
    first = {
        "runs": [shared],
        "messages": [
            ("assistant", json.dumps({"role": "assistant", "content": "Erledigt.", "runUuid": "run-0"}))
        ],
        "record": None,
        "approval": "",
        "skill": "",
        "spacing": 10,
    }
    _write(installation_engine, [first, dict(first, skill="seo-check")])
    with installation_engine.begin() as connection:  # the second conversation names the first one's run
        connection.execute(
            schema.message.update()
            .where(schema.message.c.conversation == 2)
            .values(payload=json.dumps({"role": "assistant", "content": "Erledigt.", "runUuid": "1-run-0"}))
        )
    now = int(NOW.timestamp())

    measure_rates(
        installation_engine, now=now, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY), batch_size=batch_size
    )

    agree_with_core(installation_engine, now)


def _entry_of(segment: int, writes: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "runUuid": "run-0",
        "segment": segment,
        "position": 1,
        "cardOutcomesBefore": 0,
        "ended": "completed",
        "tools": [{"name": "update_page", "calls": 1, "failed": 0}],
        "writes": writes,
        "waiting": [],
        "decision": None,
        "undecided": None,
        "at": T0,
    }


NO_STREAM = {"status": "completed", "events": [], "finished": True}
TITLE_SAVED = [{"record": "pages:1", "completeness": "complete"}]


# 001_…, "Decision": "A run that could not be persisted has no stream; its result's steps are the evidence
# then." The stored run record is built from those steps (000_…).
@pytest.mark.parametrize(
    ("runs", "entries", "claim"),
    [
        pytest.param([], [_entry_of(0, [])], "nothing_saved", id="run row gone, its entry lists no write"),
        pytest.param([NO_STREAM], [_entry_of(0, [])], "nothing_saved", id="events gone, no write listed"),
        pytest.param([], [_entry_of(0, TITLE_SAVED)], "wrote", id="run row gone, its entry lists a write"),
        pytest.param([NO_STREAM], [_entry_of(0, TITLE_SAVED)], "wrote", id="events gone, a write listed"),
        pytest.param(
            [NO_STREAM],
            [_entry_of(0, []), _entry_of(1, [])],
            "cannot_tell",
            id="continued after a decision: an approved remote call leaves no write in the record",
        ),
        pytest.param([], [], "cannot_tell", id="run row gone and no entry of it"),
    ],
)
def test_a_run_that_could_not_be_persisted_is_judged_by_its_result_s_steps_in_the_stored_run_record(
    installation_engine: Engine, runs: list[dict[str, Any]], entries: list[dict[str, Any]], claim: str
) -> None:
    answer = {"role": "assistant", "content": "Erledigt, der Titel ist gespeichert.", "runUuid": "run-0"}
    answer["segment"] = entries[-1]["segment"] if entries else 0
    chat = {
        "runs": runs,
        "messages": [
            ("user", json.dumps({"role": "user", "content": "Setze den Titel."})),
            ("assistant", json.dumps(answer, ensure_ascii=False)),
        ],
        "record": json.dumps(entries),
        "approval": "",
        "skill": "",
        "spacing": 10,
    }
    _write(installation_engine, [chat])
    now = int(NOW.timestamp())

    measure_rates(installation_engine, now=now, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY), batch_size=5)

    with installation_engine.connect() as connection:
        claims = [fact["claim"] for fact in stored_facts(connection).values() if fact["answer"] == "read"]
    assert claims == [claim]
    agree_with_core(installation_engine, now)


def test_an_answer_holding_a_lone_surrogate_escape_is_read_as_core_reads_it_or_counted_unreadable(
    installation_engine: Engine, dialect: str
) -> None:
    # "\ud800" alone is a JSON escape of no character: core reads the text with U+FFFD in its place, and so
    # does SQLite (whose json_extract makes bytes of it that are no UTF-8). PostgreSQL's jsonb and MariaDB's
    # JSON functions refuse the whole payload: there the answer is one whose message cannot be read
    # (docs/installation.md). On every engine the measurement completes.
    run = {"status": "completed", "events": [("llm", '{"kind": "llm"}', 0)], "finished": True}
    content = "Gespeichert \\ud800 und ge\\u00e4ndert."
    payload = '{"role": "assistant", "content": "' + content + '", "runUuid": "run-0"}'
    chat = {"runs": [run], "messages": [("assistant", payload)], "record": None, "approval": ""}
    _write(installation_engine, [{**chat, "skill": "", "spacing": 10}])

    now = int(NOW.timestamp())
    measure_rates(installation_engine, now=now, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY))

    with installation_engine.connect() as connection:
        facts = stored_facts(connection)
    (fact,) = [fact for fact in facts.values() if fact["conversation_uid"] == 1]  # the answer's
    if dialect == "sqlite":
        agree_with_core(installation_engine, now)
        assert fact["answer"] != "unreadable" and fact["claim"]  # read, and judged to claim a change
    else:
        assert fact["answer"] == "unreadable" and not fact["claim"]
