"""The benchmarks' installations: runs, their events, records and sys_history, written as TYPO3 writes them.

A shape says how the traffic looks (writes per run, how they spread over records, hot records, conversations,
history trimmed). The rows have the builder's shapes (data/builder.py: events, history_data, records,
conversations) but are written by a bulk path (executemany of plain tuples; COPY on PostgreSQL): the builder
writes ~60,000 rows/s, too slow for millions of rows.

sys_history is written the way TYPO3 writes it (DOMAIN.md, "When a row is stamped", "Who wrote it"):

* rows are numbered in the order they were inserted, i.e. by the moment of the save, not by their stamp;
* a row's tstamp is the start of the process that wrote it: an editor's save a second or so before it; an AI
  write of the chat's exec strategy a few seconds (after a card) to minutes (a later round of a long turn)
  before its tool_write event; one of the worker strategy the worker's start, restarted every 1-4 days;
* userid is the acting backend user: for an AI row the run's be_user (the chatting editor), who also edits
  some of the records by hand; a scheduler task writes as `_cli_`.

Of the history rows, those of the written records are their add row, the AI's own rows, the editors' and
automation's changes; the rest is editor activity on records the AI never wrote, as on a real installation.
"""

from __future__ import annotations

import heapq
import json
import random
import uuid as uuidlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine import URL

from adapters.database import make_engine
from core.outcomes import AUTOMATION_USER
from core.time import DAY_S
from jobs.schema_setup import init_db

DAY = DAY_S
WINDOW = 7 * DAY
NOW = int(datetime(2026, 11, 29, tzinfo=UTC).timestamp())
FULL_WRITES = 1_000_000
FULL_HISTORY = 10_000_000
CHUNK = 50_000  # rows per executemany/COPY chunk: memory stays flat whatever the scale
OTHER_TABLES = ("tt_content", "pages", "sys_file_metadata", "sys_category", "tx_news_domain_model_news")
OTHER_RECORDS = 10_000_000  # the uids of records the AI never wrote start here
CLI_USER = 90_000  # the be_users uid of `_cli_`
EDITOR = 90_001  # the first editor's be_users uid
EDITORS = 40  # backend users who chat with the assistant and edit pages by hand
CREATED_BEFORE = 30 * DAY  # a written record was created this long before the run that first writes it
WORKER_RESTART = (DAY, 4 * DAY)  # the chat's worker restarts after this long (at least, at most)
AUTOMATION_SHARE = 0.03  # of writes, followed by a scheduler task (`_cli_`) changing the record


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Shape:
    """How the installation's traffic looks: writes per run, how they spread over records, conversations."""

    name: str
    what: str
    writes_per_run: tuple[int, int]  # at least, at most
    rewrite_share: float  # of writes, to a record written before (else to a record of its own)
    record_pool: float = 0.0  # > 0: every write to one of writes x this many records (many writes a record)
    conversations: bool = True  # each run in a conversation of its own, with its two messages
    hot_share: float = 0.0  # of writes, to one of a few hot records (one per 25,000 writes)
    tables: tuple[str, ...] = ("pages",)  # the record tables the writes go to
    trimmed_share: float = 0.0  # of writes, older than the oldest row left in sys_history
    one_row_records: bool = False  # the editors' activity elsewhere: one row on each record (else random)
    one_chatting_editor: bool = False  # every run by one backend user (else one of EDITORS at random)


WIDE = Shape(
    "wide",
    "1-2 writes a run to pages and tt_content, 5% to a few hot records, a quarter of the writes older than "
    "the oldest history row, every other record with one history row",
    (1, 2),
    0.25,
    hot_share=0.05,
    tables=("pages", "tt_content"),
    trimmed_share=0.25,
    one_row_records=True,
)
SHAPES = {
    shape.name: shape
    for shape in (
        Shape("default", "1-3 writes a run, 30% to a record written before", (1, 3), 0.3),
        Shape("fanout", "8-16 writes a run, all to 1 record per 100 writes", (8, 16), 1.0, record_pool=0.01),
        Shape("one-per-record", "1-3 writes a run, each to a record of its own", (1, 3), 0.0),
        Shape("small-conversations", "one write a run, each run a conversation of its own", (1, 1), 0.3),
        Shape(
            "no-conversations",
            "the default, with runs no conversation names",
            (1, 3),
            0.3,
            conversations=False,
        ),
        WIDE,
        replace(
            WIDE,
            name="one-editor",
            what="the wide shape with every run by one editor and a fifth of the writes to a few hot "
            "records: a hot record's AI writes all in one lane",
            hot_share=0.2,
            one_chatting_editor=True,
        ),
    )
}


@dataclass
class Plan:
    """What to write: `writes` AI writes, sys_history filled up to `history` rows, from `first` on."""

    writes: int
    history: int
    shape: Shape
    first: int = NOW - 120 * DAY  # the first run
    span: int = 118 * DAY  # over which the runs are spread
    seed: int = 1
    after: dict[str, int] = field(default_factory=dict)  # per table, the uid its rows start after

    @property
    def horizon(self) -> int:
        """The oldest stamp left in sys_history: rows stamped before it were trimmed."""
        return self.first + int(self.span * self.shape.trimmed_share) if self.shape.trimmed_share else 0


COLUMNS = {
    "be_users": ("uid", "username"),
    "tx_nrllm_agentrun": (
        "uid",
        "uuid",
        "status",
        "configuration_identifier",
        "be_user",
        "iterations",
        "termination_reason",
        "started_at",
        "finished_at",
        "tstamp",
        "crdate",
    ),
    "tx_nrllm_agentrun_event": (
        "uid",
        "run",
        "sequence",
        "kind",
        "round",
        "duration_ms",
        "payload",
        "crdate",
    ),
    "pages": ("uid", "pid", "tstamp", "crdate", "deleted", "hidden", "title", "description"),
    "tt_content": ("uid", "pid", "tstamp", "crdate", "deleted", "hidden", "header", "bodytext"),
    "sys_history": (
        "uid",
        "tstamp",
        "actiontype",
        "usertype",
        "userid",
        "recuid",
        "tablename",
        "history_data",
    ),
    "tx_nrmcpagent_conversation": (
        "uid",
        "pid",
        "title",
        "message_count",
        "status",
        "skill_identifier",
        "tstamp",
        "crdate",
    ),
    "tx_nrmcpagent_message": ("uid", "pid", "conversation", "sorting", "role", "payload", "crdate"),
}
# The field an AI write and an editor change, per record table.
TEXT_FIELD = {"pages": "title", "tt_content": "header"}
OTHER_FIELD = {"pages": "description", "tt_content": "bodytext"}

Chunk = tuple[str, tuple[str, ...], list[tuple[Any, ...]]]


class _Writer:
    """The rows of an installation, table by table, with their uids, handed out in chunks.

    sys_history rows wait in a heap until no row with an earlier moment of insertion can still come, then get
    their uids in that order."""

    def __init__(self, plan: Plan) -> None:
        self.rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in COLUMNS}
        self.uid = {name: plan.after.get(name, 0) for name in COLUMNS}
        self.horizon = plan.horizon
        self.pending: list[tuple[int, int, tuple[Any, ...]]] = []  # (moment, order, row without uid)
        self.order = 0

    def add(self, table: str, *values: Any) -> int:
        uid = self.allot(table)
        self.put(table, uid, *values)
        return uid

    def allot(self, table: str) -> int:
        """The next uid of the table, its row to be put later."""
        self.uid[table] += 1
        return self.uid[table]

    def put(self, table: str, uid: int, *values: Any) -> None:
        self.rows[table].append((uid, *values))

    def history(self, moment: int, stamp: int, *values: Any) -> None:
        """A sys_history row inserted at `moment`, stamped `stamp`; trimmed (dropped) before the horizon."""
        if stamp >= self.horizon:
            self.order += 1
            heapq.heappush(self.pending, (moment, self.order, (stamp, *values)))

    def insert_history(self, until: int | None) -> None:
        """Number the waiting history rows inserted before `until` (all with None), in insertion order."""
        while self.pending and (until is None or self.pending[0][0] < until):
            _, _, row = heapq.heappop(self.pending)
            self.add("sys_history", *row)

    def chunks(self, force: bool = False) -> Iterator[Chunk]:
        for name, rows in self.rows.items():
            if rows and (force or len(rows) >= CHUNK):
                yield name, COLUMNS[name], rows[:]
                rows.clear()


class _Site:
    """One installation's traffic by the plan's shape: runs, their events, records and their history."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.out = _Writer(plan)
        self.recent: list[tuple[str, int]] = []  # records written lately, written again by a later run
        self.pool: dict[int, tuple[str, int]] = {}  # shape with a record pool: pool slot -> record
        self.pool_size = max(int(plan.writes * plan.shape.record_pool), 1)
        self.hot: list[tuple[str, int]] = []
        self.hot_count = max(plan.writes // 25_000, 1) if plan.shape.hot_share else 0
        self.created: dict[tuple[str, int], int] = {}  # records this run created: put once it has ended
        self.worker_start = plan.first - DAY
        self.worker_restart = plan.first + self.rng.randint(*WORKER_RESTART)
        self.other_record = OTHER_RECORDS

    def history(
        self, moment: int, stamp: int, action: int, record: tuple[str, int], user: int, data: str | None
    ) -> None:
        table, recuid = record
        self.out.history(moment, stamp, action, "BE", user, recuid, table, data)

    def event(
        self, run: int, seq: int, kind: str, round_: int, ms: float, payload: dict[str, Any], at: int
    ) -> None:
        body = {"kind": kind, "round": round_, "durationMs": ms, **payload}
        self.out.add("tx_nrllm_agentrun_event", run, seq, kind, round_, ms, json_text(body), at)

    def llm(self, run: int, seq: int, round_: int, tools: list[str], at: int) -> int:
        self.event(run, seq, "context", round_, 0.0, {"contextBudget": 128000}, at)
        self.event(run, seq + 1, "request", round_, 0.0, {"toolSpecs": 24}, at)
        finish = "tool_calls" if tools else "stop"
        tokens = {"promptTokens": 2100, "completionTokens": 180, "totalTokens": 2280}
        payload = {"finishReason": finish, **tokens, "requestedToolNames": tools, "contentLength": 0}
        self.event(run, seq + 2, "llm", round_, 1800.0, payload, at)
        return seq + 3

    def record(self, start: int) -> tuple[tuple[str, int], bool]:
        """The record a write goes to, and whether it is new."""
        shape = self.plan.shape
        if shape.hot_share and self.rng.random() < shape.hot_share:
            if len(self.hot) < self.hot_count:
                self.hot.append(self.new_record(start))
                return self.hot[-1], True
            return self.rng.choice(self.hot), False
        if shape.record_pool:
            slot = self.rng.randrange(self.pool_size)
            if slot in self.pool:
                return self.pool[slot], False
            self.pool[slot] = self.new_record(start)
            return self.pool[slot], True
        if self.recent and self.rng.random() < shape.rewrite_share:
            return self.rng.choice(self.recent), False
        record = self.new_record(start)
        self.recent.append(record)
        if len(self.recent) > 200:
            self.recent.pop(0)
        return record, True

    def new_record(self, start: int) -> tuple[str, int]:
        table = self.rng.choice(self.plan.shape.tables)
        created = start - CREATED_BEFORE
        record = (table, self.out.allot(table))
        self.created[record] = created
        field_name = TEXT_FIELD[table]
        values = {"pid": 1, field_name: f"Neu {record[1]}", "tstamp": created, "crdate": created, "hidden": 0}
        self.history(created, created - 1, 1, record, self.editor(), json_text(values))
        return record

    def editor(self) -> int:
        return EDITOR + self.rng.randrange(EDITORS)

    def stamp(self, strategy: str, at: int) -> int:
        """An AI row's stamp: the start of the process that wrote it (DOMAIN.md, "When a row is stamped")."""
        if strategy == "worker":
            while at >= self.worker_restart:
                self.worker_start = self.worker_restart
                self.worker_restart += self.rng.randint(*WORKER_RESTART)
            return self.worker_start
        if self.rng.random() < 0.2:
            return at - self.rng.randint(30, 180)  # a later model round of a long turn
        return at - self.rng.randint(1, 8)  # the process an approval forked

    def fate(self, record: tuple[str, int], new: bool, at: int, chatting: int) -> bool:
        """What editors and tasks do to the record after the write (history rows); whether it is deleted."""
        table = record[0]
        fate = self.rng.random()
        # The chatting editor edits by hand half the time, another editor the rest.
        by = chatting if self.rng.random() < 0.5 else self.editor()
        if fate < 0.25:
            field_name = self.rng.choice((TEXT_FIELD[table], OTHER_FIELD[table]))
            change = {"oldRecord": {field_name: ""}, "newRecord": {field_name: "von Hand"}}
            moment = at + self.rng.randint(600, 5 * DAY)
            self.history(moment, moment - 1, 2, record, by, json_text(change))
        elif fate < 0.30 and new:
            moment = at + self.rng.randint(600, 5 * DAY)
            self.history(moment, moment - 1, 4, record, by, None)
            return True
        elif fate < 0.40:
            change = {"oldRecord": {TEXT_FIELD[table]: ""}, "newRecord": {TEXT_FIELD[table]: "später"}}
            moment = at + WINDOW + self.rng.randint(DAY, 10 * DAY)
            self.history(moment, moment - 1, 2, record, by, json_text(change))
        if self.rng.random() < AUTOMATION_SHARE:
            field_name = self.rng.choice((TEXT_FIELD[table], OTHER_FIELD[table]))
            change = {"oldRecord": {field_name: "x"}, "newRecord": {field_name: "automatisch"}}
            moment = at + self.rng.randint(3600, 6 * DAY)
            self.history(moment, moment - self.rng.randint(1, 300), 2, record, CLI_USER, json_text(change))
        return False

    def write(self, run: int, seq: int, record: tuple[str, int], at: int, user: int, strategy: str) -> None:
        table, recuid = record
        self.event(run, seq, "approval", 0, 0.0, {"approved": True, "decidedBy": user}, at)
        tool = {
            "toolName": "update_record",
            "toolIsError": False,
            "toolArgumentsLength": 12,
            "toolResultLength": 11,
        }
        self.event(run, seq + 1, "tool", 1, 85.0, tool, at)
        target = {
            "toolName": "update_record",
            "writeTargetTable": table,
            "writeTargetUid": recuid,
            "writeCompleteness": "complete",
        }
        self.event(run, seq + 2, "tool_write", 1, 0.0, target, at)
        change = {"oldRecord": {TEXT_FIELD[table]: ""}, "newRecord": {TEXT_FIELD[table]: "neu"}}
        self.history(at, self.stamp(strategy, at), 2, record, user, json_text(change))

    def run(self, written: int) -> int:
        """One run with its writes (and its conversation); how many writes it made."""
        plan = self.plan
        low, high = plan.shape.writes_per_run
        count = min(self.rng.randint(low, high), plan.writes - written)
        start = plan.first + int(plan.span * written / plan.writes)
        # Every row inserted before this run's records were created is final now.
        self.out.insert_history(start - CREATED_BEFORE - DAY)
        user = EDITOR if plan.shape.one_chatting_editor else self.editor()
        strategy = "worker" if self.rng.random() < 0.5 else "exec"
        run = self.out.uid["tx_nrllm_agentrun"] + 1
        seq = self.llm(run, 0, 1, ["update_record"], start)
        at = start
        deleted: set[tuple[str, int]] = set()
        for n in range(count):
            at = start + 60 * n + 30
            record, new = self.record(start)
            self.write(run, seq, record, at, user, strategy)
            if self.fate(record, new, at, user):
                deleted.add(record)
            seq += 3
        self.llm(run, seq, 2, [], at + 3)
        uuid = str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))
        self.out.add(
            "tx_nrllm_agentrun",
            uuid,
            "completed",
            "content-assistant",
            user,
            2,
            "completed",
            start,
            at + 5,
            at + 5,
            start,
        )
        for (table, recuid), created in self.created.items():
            gone = int((table, recuid) in deleted)
            self.out.put(table, recuid, 1, created, created, gone, 0, f"Neu {recuid}", "")
        self.created.clear()
        if plan.shape.conversations:
            self.conversation(uuid, start, at + 5)
        return count

    def conversation(self, uuid: str, start: int, end: int) -> None:
        chat = self.out.add("tx_nrmcpagent_conversation", 0, "Seite überarbeiten", 2, "idle", "", end, start)
        asked = {"role": "user", "content": "Bitte überarbeite die Seite.", "createdAt": start}
        self.out.add("tx_nrmcpagent_message", 0, chat, 1, "user", json_text(asked), start)
        answer = {
            "role": "assistant",
            "content": "Gespeichert.",
            "runUuid": uuid,
            "segment": 1,
            "createdAt": end,
        }
        self.out.add("tx_nrmcpagent_message", 0, chat, 2, "assistant", json_text(answer), end)

    def editors(self) -> None:
        """Editors' activity on records the AI never wrote: the rest of sys_history."""
        table = self.rng.choice(OTHER_TABLES)
        field_name = self.rng.choice(("header", "bodytext", "title"))
        change = {"oldRecord": {field_name: "alt"}, "newRecord": {field_name: "neu"}}
        low = max(self.plan.first - 30 * DAY, self.plan.horizon)
        at = self.rng.randint(low, self.plan.first + 120 * DAY)
        if self.plan.shape.one_row_records:
            self.other_record += 1
            recuid = self.other_record
        else:
            recuid = OTHER_RECORDS + self.rng.randint(0, 10**6)
        self.out.add("sys_history", at, 2, "BE", self.editor(), recuid, table, json_text(change))


def _users() -> Iterator[tuple[int, str]]:
    yield CLI_USER, AUTOMATION_USER
    for n in range(EDITORS):
        yield EDITOR + n, f"editor{n + 1}"


def rows(plan: Plan) -> Iterator[Chunk]:
    """Chunks of (table, columns, rows) of the whole installation, in the builder's shapes."""
    site = _Site(plan)
    if not plan.after.get("be_users"):
        for uid, name in _users():
            site.out.put("be_users", uid, name)
    written = 0
    while written < plan.writes:
        written += site.run(written)
        yield from site.out.chunks()
    site.out.insert_history(None)
    while site.out.uid["sys_history"] < plan.history:
        site.editors()
        yield from site.out.chunks()
    yield from site.out.chunks(force=True)


def full_plan(scale: float, shape: Shape) -> Plan:
    return Plan(
        writes=max(int(FULL_WRITES * scale), 10), history=max(int(FULL_HISTORY * scale), 100), shape=shape
    )


def build(url: URL, plan: Plan, *, create: bool = True) -> dict[str, int]:
    """Write the installation's rows by the bulk path (`create`: every table by init_db first)."""
    engine = make_engine(url)
    if create:
        init_db(engine, with_upstream=True)
    counts: dict[str, int] = {}
    backend = url.get_backend_name()
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        if backend == "sqlite":
            cursor.execute("PRAGMA synchronous = OFF")
        for name, columns, chunk in rows(plan):
            counts[name] = counts.get(name, 0) + len(chunk)
            _write(backend, cursor, name, columns, chunk)
        if backend == "postgresql":
            for name in counts:
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'uid'), (SELECT max(uid) FROM {name}))"
                )
        raw.commit()
    finally:
        raw.close()
        engine.dispose()
    return counts


def _write(
    backend: str, cursor: Any, name: str, columns: tuple[str, ...], chunk: list[tuple[Any, ...]]
) -> None:
    names = ", ".join(columns)
    if backend == "postgresql":
        with cursor.copy(f"COPY {name} ({names}) FROM STDIN") as copy:
            for row in chunk:
                copy.write_row(row)
        return
    marks = ", ".join(["?" if backend == "sqlite" else "%s"] * len(columns))
    cursor.executemany(f"INSERT INTO {name} ({names}) VALUES ({marks})", chunk)
