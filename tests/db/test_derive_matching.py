"""derive-outcomes' SQL path against core.classification.classify_writes on planted installations (DESIGN.md
rules 3, 4 and 7 as TYPO3 writes sys_history): rows inserted directly with explicit uid, tstamp, userid,
workspace, correlation_id and history_data, stamped the way the chat's exec and worker processes stamp
them."""

from __future__ import annotations

import hashlib
import json
import random
import uuid as uuidlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, insert

from adapters import history as history_queries
from adapters import schema
from core.classification import classify_writes
from core.outcomes import Action, Presence, Write, WriteOutcome
from core.time import DAY_S
from jobs.derive import derive_outcomes
from tests.db.conftest import on_sqlite_alone
from tests.db.derive_reference import Judged, stored
from tests.db.matching_reference import reference_history

T = 1_790_000_000
WINDOW = 7 * DAY_S
NOW = T + 30 * DAY_S
EDITOR, OTHER_EDITOR, CLI = 1, 2, 9
FIELDS = ("title", "description", "hidden", "tstamp")
VALUES = ("a", "b", "c")


@dataclass
class Planted:
    """An installation's rows, inserted in one go."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (insertion moment, row)
    pages: dict[int, int] = field(default_factory=dict)  # uid -> deleted

    def run(self, be_user: int) -> tuple[int, str]:
        uid = len(self.runs) + 1
        uuid = str(uuidlib.UUID(int=random.getrandbits(128)))
        self.runs.append(
            {
                "uid": uid,
                "uuid": uuid,
                "status": "completed",
                "be_user": be_user,
                "crdate": T,
                "started_at": T,
            }
        )
        return uid, uuid

    def write(self, run: int, page: int, at: int) -> int:
        uid = len(self.events) + 1
        payload = {"kind": "tool_write", "round": 1, "durationMs": 0, "toolName": "update_record"}
        payload |= {"writeTargetTable": "pages", "writeTargetUid": page}
        self.events.append(
            {"uid": uid, "run": run, "sequence": uid, "kind": "tool_write", "payload": json.dumps(payload)}
            | {"crdate": at, "round": 1}
        )
        return uid

    def row(
        self,
        inserted: int,
        page: int,
        action: Action,
        *,
        at: int,
        by: int | None,
        data: dict[str, Any] | None = None,
        workspace: int = 0,
        scope: str | None = None,
        usertype: str = "BE",
    ) -> None:
        md5 = hashlib.md5(f"pages:{page}".encode()).hexdigest()
        scope = scope or hashlib.md5(f"{inserted}:{len(self.rows)}".encode()).hexdigest()
        row = {
            "tstamp": at,
            "actiontype": int(action),
            "usertype": usertype,
            "userid": by,
            "recuid": page,
            "tablename": "pages",
            "history_data": None if data is None else json.dumps(data),
            "workspace": workspace,
            "correlation_id": f"0400${scope}:{md5}",
        }
        self.rows.append((inserted, row))

    def save(self, connection: Connection, *, with_users: bool = True) -> None:
        if with_users:
            users = [(EDITOR, "editor"), (OTHER_EDITOR, "other"), (CLI, "_cli_")]
            connection.execute(insert(schema.be_users), [{"uid": u, "username": n} for u, n in users])
        connection.execute(insert(schema.agentrun), self.runs)
        connection.execute(insert(schema.agentrun_event), self.events)
        ordered = sorted(self.rows, key=lambda pair: pair[0])
        history = [{"uid": uid, **row} for uid, (_, row) in enumerate(ordered, start=1)]
        connection.execute(insert(schema.sys_history), history)
        pages = [{"uid": uid, "deleted": deleted, "title": "x"} for uid, deleted in self.pages.items()]
        connection.execute(insert(schema.pages), pages)


def _planted(seed: int) -> Planted:
    random.seed(seed)
    site = Planted()
    values: dict[int, dict[str, str]] = {}
    for page in (1, 2, 3):
        site.pages[page] = int(random.random() < 0.15)
        values[page] = {name: random.choice(VALUES) for name in FIELDS}
        site.row(T - 30 * DAY_S, page, Action.ADD, at=T - 30 * DAY_S, by=EDITOR, data=dict(values[page]))

    def change(page: int, names: list[str]) -> dict[str, Any]:
        old = {name: values[page][name] for name in names}
        new = {name: random.choice(VALUES) for name in names}
        values[page].update(new)
        return {"oldRecord": old, "newRecord": new}

    worker = T - random.choice((0, 3 * DAY_S))  # one worker's start, shared by its rows
    for _ in range(random.randint(2, 5)):
        be_user = random.choice((EDITOR, EDITOR, OTHER_EDITOR, CLI))
        run, uuid = site.run(be_user)
        named = random.random() < 0.2
        for _ in range(random.randint(1, 3)):
            page = random.choice((1, 2, 3))
            at = T + random.randint(0, 3 * DAY_S)
            site.write(run, page, at)
            if random.random() < 0.1:
                continue  # its own row is missing
            stamp = random.choice((at, at - 3, at - 75, worker, at + 1, at - 5 * DAY_S))
            action = random.choice((Action.MODIFY, Action.MODIFY, Action.MODIFY, Action.ADD, Action.MOVE))
            names = random.sample(FIELDS[:3], random.randint(1, 2))
            data = change(page, names) if action is Action.MODIFY else dict.fromkeys(names, "v")
            scope = uuid if named else None
            site.row(at, page, action, at=min(stamp, at + 1), by=be_user, data=data, scope=scope)
    for _ in range(random.randint(3, 12)):
        page = random.choice((1, 2, 3))
        at = T + random.randint(-DAY_S, 12 * DAY_S)
        by = random.choice((EDITOR, OTHER_EDITOR, CLI, None))
        # A frontend user's row (Extbase's history tracking) carries a frontend user's uid, which may equal a
        # backend user's; a row without a user carries none.
        usertype = random.choice(("BE", "BE", "BE", "FE", ""))
        by = None if usertype == "" else by
        kind = random.choice(("modify", "modify", "modify", "delete", "move", "undelete", "draft", "publish"))
        if kind == "modify":
            names = random.sample(FIELDS, random.randint(1, 2))
            data: dict[str, Any] | None = change(page, names)
            if random.random() < 0.05:
                site.row(at, page, Action.MODIFY, at=at, by=by, data=None, usertype=usertype)
                continue
            site.row(at, page, Action.MODIFY, at=at, by=by, data=data, usertype=usertype)
        elif kind == "draft":
            names = random.sample(FIELDS, 1)
            new = {name: random.choice(VALUES) for name in names}
            draft = {"oldRecord": dict.fromkeys(names, ""), "newRecord": new}
            if random.random() < 0.5:  # the first edit in the workspace: the draft's copy of every field
                site.row(at, page, Action.ADD, at=at, by=by, data=dict(values[page]), workspace=1)
            site.row(at, page, Action.MODIFY, at=at, by=by, data=draft, workspace=1)
        else:
            action = {"delete": Action.DELETE, "move": Action.MOVE, "undelete": Action.UNDELETE}.get(kind)
            site.row(at, page, action or Action.PUBLISH, at=at, by=by)
    return site


def _judged(outcome: WriteOutcome) -> Judged:
    return Judged(
        outcome.outcome.value,
        outcome.reason.value if outcome.reason else "",
        outcome.edit_scope.value if outcome.edit_scope else "",
        outcome.first_change_after_s,
        tuple(sorted(set(outcome.decided_by))),
    )


def _reference(engine: Engine, site: Planted) -> dict[int, Judged]:
    """Every write as core classifies it, from rows read by tests.db.matching_reference."""
    uuids = {run["uid"]: run["uuid"] for run in site.runs}
    writes: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for event in site.events:
        target = json.loads(event["payload"])
        writes[("pages", target["writeTargetUid"])].append((event["uid"], event["run"]))
    with engine.connect() as connection:
        read = reference_history(connection, writes)
        oldest = history_queries.oldest_retained_tstamp(connection)
    found: dict[int, Judged] = {}
    crdate = {event["uid"]: event["crdate"] for event in site.events}
    for (table, uid), pairs in writes.items():
        record_writes = [
            Write(event, table, uid, crdate[event], run=uuids[run], channel=read.channels[event])
            for event, run in pairs
        ]
        presence = Presence.DELETED if site.pages[uid] else Presence.PRESENT
        outcomes = classify_writes(record_writes, read.rows[(table, uid)], presence, oldest, WINDOW)
        found.update({event: _judged(outcome) for event, outcome in outcomes.items()})
    return found


# The matching is the same SQL on every dialect, spelled differently only where adapters/dialect says so, and
# every installation runs each statement of the job: SQLite, the quickest, takes the most seeds, each server
# the first eight of them. The dialect is parametrized on its own: a dialect given in one list with the seed
# would be a parameter of each test, and each test would build its installation anew.
SQLITE_SEEDS = range(40)
SERVER_SEEDS = range(8)


@pytest.mark.parametrize("seed", SQLITE_SEEDS)
@on_sqlite_alone
def test_the_sql_path_classifies_every_write_as_core_does(installation_engine: Engine, seed: int) -> None:
    _classifies_as_core_does(installation_engine, seed)


@pytest.mark.parametrize("seed", SERVER_SEEDS)
@pytest.mark.parametrize("dialect", ["mariadb", "postgresql"], indirect=True)
def test_the_sql_path_classifies_every_write_as_core_does_on_the_servers(
    installation_engine: Engine, seed: int
) -> None:
    _classifies_as_core_does(installation_engine, seed)


def _classifies_as_core_does(installation_engine: Engine, seed: int) -> None:
    site = _planted(seed)
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    expected = _reference(installation_engine, site)
    differing = {uid: (writes.get(uid), want) for uid, want in expected.items() if writes.get(uid) != want}
    assert not differing, differing


def _one_write(by_row: int, *, at: int, scope: str | None = None) -> tuple[Planted, str]:
    """A page the editor's run wrote at T (its own row inserted then, stamped `at`), and a row after it by
    `by_row` that changes the written field a day later."""
    site = Planted()
    site.pages[1] = 0
    run, uuid = site.run(EDITOR)
    site.write(run, 1, T)
    site.row(T - 30 * DAY_S, 1, Action.ADD, at=T - 30 * DAY_S, by=EDITOR, data={"title": "a"})
    own = {"oldRecord": {"title": "a"}, "newRecord": {"title": "b"}}
    site.row(T, 1, Action.MODIFY, at=at, by=EDITOR, data=own, scope=uuid if scope == "run" else scope)
    later = {"oldRecord": {"title": "b"}, "newRecord": {"title": "c"}}
    site.row(T + DAY_S, 1, Action.MODIFY, at=T + DAY_S, by=by_row, data=later)
    return site, uuid


def test_a_worker_row_stamped_three_days_before_its_write_is_its_own_and_an_edit_of_its_field_is_same_fields(
    installation_engine: Engine,
) -> None:
    site, _ = _one_write(OTHER_EDITOR, at=T - 3 * DAY_S)
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    assert writes[1] == Judged("edited", "", "same_fields", DAY_S, (2, 3))


def test_an_automation_change_of_the_written_field_is_unknown_changed_by_automation(
    installation_engine: Engine,
) -> None:
    site, _ = _one_write(CLI, at=T - 3)
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    assert writes[1] == Judged("unknown", "changed_by_automation", "", None, ())


def test_without_a_be_users_table_the_cli_user_is_a_human(installation_engine: Engine) -> None:
    site, _ = _one_write(CLI, at=T - 3)
    with installation_engine.begin() as connection:
        site.save(connection, with_users=False)
        schema.be_users.drop(connection)
    try:
        derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)
    finally:
        with installation_engine.begin() as connection:
            schema.be_users.create(connection)

    writes, _ = stored(installation_engine)
    assert writes[1] == Judged("edited", "", "same_fields", DAY_S, (2, 3))


def test_a_row_whose_correlation_id_names_the_run_is_its_own_whatever_its_stamp(
    installation_engine: Engine,
) -> None:
    # Stamped after the write's moment: by insertion order it could not be W's, but it names W's run.
    site, _ = _one_write(OTHER_EDITOR, at=T + 600, scope="run")
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    assert writes[1] == Judged("edited", "", "same_fields", DAY_S, (2, 3))


def test_an_edit_back_to_the_value_before_the_write_is_reverted(installation_engine: Engine) -> None:
    site, _ = _one_write(OTHER_EDITOR, at=T - 3)
    _, last = site.rows[-1]
    last["history_data"] = json.dumps({"oldRecord": {"title": "b"}, "newRecord": {"title": "a"}})
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    assert writes[1] == Judged("edited", "", "reverted", DAY_S, (2, 3))


def test_a_field_the_own_rows_text_names_twice_is_one_written_field(installation_engine: Engine) -> None:
    site, _ = _one_write(OTHER_EDITOR, at=T - 3)
    _, own = site.rows[1]
    own["history_data"] = '{"oldRecord":{"title":"a"},"newRecord":{"title":"b","title":"b"}}'
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    assert writes[1] == Judged("edited", "", "same_fields", DAY_S, (2, 3))


# At the later write's bound the row is that write's own, an AI row and no edit of the first write; a second
# past it the later write takes the first write's row (rule 3, from the last write backwards), and the row
# edits it.
@pytest.mark.parametrize(
    ("after_s", "first", "later"),
    [
        (2, ("accepted_unchanged", ""), ("accepted_unchanged", "")),
        (3, ("unknown", "own_row_unclear"), ("edited", "")),
    ],
    ids=["at-the-later-writes-bound", "a-second-past-it"],
)
def test_a_writer_row_at_a_later_writes_bound_is_read_as_core_reads_it(
    installation_engine: Engine, after_s: int, first: tuple[str, str], later: tuple[str, str]
) -> None:
    site = Planted()
    site.pages[1] = 0
    first_run, _ = site.run(EDITOR)
    later_run, _ = site.run(EDITOR)
    site.write(first_run, 1, T)
    site.write(later_run, 1, T + 3600)
    own = {"oldRecord": {"title": "a"}, "newRecord": {"title": "b"}}
    site.row(T, 1, Action.MODIFY, at=T - 3, by=EDITOR, data=own)
    row = {"oldRecord": {"title": "b"}, "newRecord": {"title": "c"}}
    site.row(T + 3600 + after_s, 1, Action.MODIFY, at=T + 3600 + after_s, by=EDITOR, data=row)
    with installation_engine.begin() as connection:
        site.save(connection)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    writes, _ = stored(installation_engine)
    assert writes == _reference(installation_engine, site)
    assert [(writes[1].outcome, writes[1].reason), (writes[2].outcome, writes[2].reason)] == [first, later]
