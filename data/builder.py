"""A small fluent API that writes an installation: records, history, conversations, runs and cards.

Tests, the demo generator and the benchmarks all build their data with it, so no test hand-writes rows:

    site = Installation(connection)
    page = site.page("Produkte", at=t0)
    chat = site.conversation(configuration="seo-assistant", skill="seo-check", page=page, at=t0)
    chat.user("Prüfe die SEO-Felder", at=t0)
    run = chat.run()
    run.propose("update_page_seo", page, fields=("seo_title",))
    run.approve()                    # "Übernehmen": the tool runs, writes, and leaves its sys_history row
    run.answer("Seitentitel gespeichert.")
    run.finish()
    chat.close()
    site.finish()

This module holds the installation; data/records.py its records and their history rows, data/chat.py the
conversations, data/agent_run.py and data/run_segment.py nr-llm's runs and their segments, data/payloads.py
how the chat writes what it stores.

A sys_history row is stamped (`at`) with the start of the PHP process that wrote it, and its uid is the
order in which rows were inserted, the order of the real writes (DOMAIN.md, "When a row is stamped"). A test
that builds rows one after the other gets uids in the order of its calls (`HistoryOrder.CALLS`): the calls are
the insertions. The generator tells each conversation's story in one go, fates weeks after its writes, so it
asks for `HistoryOrder.MOMENTS`: rows wait, and are numbered by their real `moment` when the installation
flushes them. Rows are written in the shapes of DOMAIN.md and DESIGN.md ("Chat-side JSON").
Every uid is assigned here.
Each run also keeps the run-record entries the chat would have stored for it (`Run.planted_entries`), so
that the record logic can be checked against what was planted.
"""

from __future__ import annotations

import hashlib
import heapq
import random
import uuid as uuidlib
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Table

from adapters import schema
from core.outcomes import Action
from data.chat import Conversation
from data.payloads import compact_json
from data.records import HistoryRow, Record
from data.rows import Row, RowBuffer

# The backend user scheduler tasks and CLI commands write as (DOMAIN.md, "Who wrote it").
CLI_USERNAME = "_cli_"


def _column_defaults(table: Table) -> dict[str, Any]:
    """Each column's value when an insert leaves it out: a record row with every column is written in one
    executemany with the others (data/rows.py writes a run of rows with the same columns at once)."""
    defaults: dict[str, Any] = {}
    for column in table.columns:
        default = column.server_default
        if default is None:
            defaults[column.name] = None
        else:
            text = str(getattr(default, "arg", ""))
            defaults[column.name] = int(text) if text.lstrip("-").isdigit() else text
    return defaults


_COLUMN_DEFAULTS = {table.name: _column_defaults(table) for table in (schema.pages, schema.tt_content)}


class HistoryOrder(StrEnum):
    """How sys_history rows get their uids (insertion order)."""

    CALLS = "calls"  # in the order of the builder's calls: the calls are the insertions
    MOMENTS = "moments"  # by each row's real moment, when the installation flushes them


class Installation:
    """A TYPO3 installation being written: record tables, sys_history, nr-llm runs and the chat."""

    def __init__(
        self,
        connection: Connection | None = None,
        *,
        seed: int = 0,
        flush_rows: int | None = None,
        on_flush: Any = None,
        history_order: HistoryOrder = HistoryOrder.CALLS,
        until: int | None = None,
    ) -> None:
        kwargs: dict[str, Any] = {"on_flush": on_flush}
        if flush_rows is not None:
            kwargs["flush_rows"] = flush_rows
        self.rows = RowBuffer(connection, **kwargs)
        self.random = random.Random(seed)
        # DataHandler's correlation scopes, from a stream of their own so that run uuids stay as they were.
        self._scopes = random.Random(f"correlation:{seed}")
        self._records: dict[str, Record] = {}
        self.oldest_history: int | None = None
        self._configurations: dict[str, int] = {}
        self._users: dict[str, int] = {}
        self.history_order = history_order
        self._calls = 0
        self._waiting: list[tuple[int, int, HistoryRow, Row]] = []  # MOMENTS order: (moment, call, row)
        self._numbered_up_to: int | None = None  # the latest moment numbered so far
        self.until = until  # the installation's end: an editor's act after it has not happened yet

    def acted(self, at: int) -> bool:
        """Whether an editor's act at `at` has happened by the installation's end (always, without one)."""
        return self.until is None or at <= self.until

    # --- uids and identifiers -----------------------------------------------------------------------------

    def new_uuid(self) -> str:
        """A run uuid, deterministic for the seed."""
        return str(uuidlib.UUID(int=self.random.getrandbits(128), version=4))

    # --- configurations and records -----------------------------------------------------------------------

    def configuration(self, identifier: str, name: str, *, at: int = 0) -> int:
        """A tx_nrllm_configuration row; returns its uid (an identifier is written once)."""
        if identifier in self._configurations:
            return self._configurations[identifier]
        uid = self.rows.uid(schema.nrllm_configuration)
        self.rows.add(
            schema.nrllm_configuration,
            {"uid": uid, "identifier": identifier, "name": name, "tstamp": at, "crdate": at},
        )
        self._configurations[identifier] = uid
        return uid

    def backend_user(self, username: str, *, uid: int | None = None, at: int = 0) -> int:
        """A be_users row; returns its uid (a username is written once)."""
        if username in self._users:
            return self._users[username]
        table = schema.be_users
        uid = self.rows.uid(table) if uid is None else uid
        self.rows.add(table, {"uid": uid, "username": username, "tstamp": at, "crdate": at})
        self._users[username] = uid
        return uid

    def cli_user(self, *, uid: int | None = None, at: int = 0) -> int:
        """The `_cli_` backend user scheduler tasks and CLI commands write as; returns its uid."""
        return self.backend_user(CLI_USERNAME, uid=uid, at=at)

    def page(
        self, title: str, *, at: int, pid: int = 0, hidden: bool = False, by: int = 1, history: bool = True
    ) -> Record:
        """A page, created by an editor (with its sys_history add row, unless imported without one)."""
        table = schema.pages
        values = {"pid": pid, "title": title, "tstamp": at, "crdate": at, "description": ""}
        return self._create(
            table.name, self.rows.uid(table), values, at=at, hidden=hidden, by=by, history=history
        )

    def content(self, page: Record, header: str, *, at: int, bodytext: str = "", by: int = 1) -> Record:
        """A content element on a page, created by an editor."""
        table = schema.tt_content
        values = {"pid": page.uid, "header": header, "bodytext": bodytext, "CType": "text"}
        values |= {"tstamp": at, "crdate": at}
        return self._create(table.name, self.rows.uid(table), values, at=at, hidden=False, by=by)

    def missing_table_record(self, table: str, uid: int) -> Record:
        """A record of a table this database does not have (an extension removed since)."""
        return Record(table=table, uid=uid, values={}, gone=True)

    def _create(
        self,
        table: str,
        uid: int,
        values: dict[str, Any],
        *,
        at: int,
        hidden: bool,
        by: int,
        history: bool = True,
    ) -> Record:
        record = Record(table=table, uid=uid, values=values, hidden=hidden)
        self._records[record.ref] = record
        if history:
            self.history(record, Action.ADD, at=at, new={**values, "hidden": int(hidden)}, by=by)
        return record

    # --- history ------------------------------------------------------------------------------------------

    def history(
        self,
        record: Record,
        action: Action | int,
        *,
        at: int,
        new: Mapping[str, Any] | None = None,
        old: Mapping[str, Any] | None = None,
        by: int = 1,
        raw_data: str | None = None,
        moment: int | None = None,
        workspace: int = 0,
        names_run: str = "",
    ) -> int:
        """A sys_history row as TYPO3's DataHandler writes it, stamped `at` (its process's start) and inserted
        at `moment` (default: `at`); returns its uid, or 0 in MOMENTS order, where the flush numbers it.

        `workspace` > 0 records a draft; `names_run` a run uuid the DataHandler run was given as its
        correlation scope (DOMAIN.md, "correlation_id"), else the row gets a scope of its own. An `action`
        that is a bare int is a code no TYPO3 action has, as an extension may write one."""
        return self.history_row(
            record,
            action,
            at=at,
            new=new,
            old=old,
            by=by,
            raw_data=raw_data,
            moment=moment,
            workspace=workspace,
            names_run=names_run,
        ).uid

    def history_row(
        self,
        record: Record,
        action: Action | int,
        *,
        at: int,
        new: Mapping[str, Any] | None = None,
        old: Mapping[str, Any] | None = None,
        by: int = 1,
        raw_data: str | None = None,
        moment: int | None = None,
        workspace: int = 0,
        names_run: str = "",
    ) -> HistoryRow:
        """history(), returning the planted row itself."""
        if record.written:
            raise ValueError(f"{record.ref} was already written; build its whole story before a flush")
        if raw_data is not None:
            data: str | None = raw_data
        elif action == Action.MODIFY:
            data = compact_json({"oldRecord": dict(old or {}), "newRecord": dict(new or {})})
        elif action == Action.ADD:
            data = compact_json(dict(new or {}))
        else:
            data = None
        readable = raw_data is None and action in (Action.ADD, Action.MODIFY)
        inserted = at if moment is None else moment
        planted = HistoryRow(
            stamp=at,
            moment=inserted,
            call=self._calls,
            action=action,
            user=by,
            workspace=workspace,
            old=dict(old or {}) if readable and action == Action.MODIFY else None,
            new=dict(new or {}) if readable else None,
            names_run=names_run,
            insertion=(0, self._calls)
            if self.history_order == HistoryOrder.CALLS
            else (inserted, self._calls),
        )
        self._calls += 1
        record.history.append(planted)
        scope = names_run or f"{self._scopes.getrandbits(128):032x}"
        target = hashlib.md5(f"{record.table}:{record.uid}".encode(), usedforsecurity=False).hexdigest()
        row = {
            "tstamp": at,
            "actiontype": int(action),
            "usertype": "BE",
            "userid": by,
            "recuid": record.uid,
            "tablename": record.table,
            "history_data": data,
            "workspace": workspace,
            "correlation_id": f"0400${scope}:{target}",
        }
        if self.history_order == HistoryOrder.CALLS:
            self._number(planted, row)
        else:
            heapq.heappush(self._waiting, (planted.moment, planted.call, planted, row))
        if self.oldest_history is None or at < self.oldest_history:
            self.oldest_history = at
        return planted

    def _number(self, planted: HistoryRow, row: Row) -> None:
        planted.uid = self.rows.uid(schema.sys_history)
        self.rows.add(schema.sys_history, {"uid": planted.uid, **row})

    def _number_waiting(self, before: int | None) -> None:
        """Number the waiting rows inserted before `before` (every one with None), in their moments' order."""
        waiting = self._waiting
        while waiting and (before is None or waiting[0][0] < before):
            moment, _, planted, row = heapq.heappop(waiting)
            if self._numbered_up_to is not None and moment < self._numbered_up_to:
                raise ValueError(f"a sys_history row inserted at {moment} came after later ones")
            self._numbered_up_to = moment
            self._number(planted, row)

    # An editor's act after the installation's end (`until`) has not happened: the record stays as it is, no
    # row is planted, and the act returns 0.

    def human_edit(self, record: Record, changes: Mapping[str, Any], *, at: int, by: int = 1) -> int:
        """An editor changes fields of a record in the backend."""
        if not self.acted(at):
            return 0
        old = {name: record.value(name) for name in changes}
        record.values.update(changes)
        return self.history(record, Action.MODIFY, at=at, new=changes, old=old, by=by)

    def set_hidden(self, record: Record, hidden: bool, *, at: int, by: int = 1) -> int:
        """An editor hides or unhides (releases) a record."""
        if not self.acted(at):
            return 0
        old = {"hidden": int(record.hidden)}
        record.hidden = hidden
        return self.history(record, Action.MODIFY, at=at, new={"hidden": int(hidden)}, old=old, by=by)

    def delete(self, record: Record, *, at: int, by: int = 1, hard: bool = False) -> int:
        """An editor deletes a record: deleted=1, or the row removed altogether (hard)."""
        if not self.acted(at):
            return 0
        record.deleted = True
        record.gone = record.gone or hard
        return self.history(record, Action.DELETE, at=at, by=by)

    def undelete(self, record: Record, *, at: int, by: int = 1) -> int:
        """An editor restores a deleted record from the recycler."""
        if not self.acted(at):
            return 0
        record.deleted = False
        return self.history(record, Action.UNDELETE, at=at, by=by)

    def move(self, record: Record, *, at: int, by: int = 1) -> int:
        """An editor moves a record."""
        if not self.acted(at):
            return 0
        return self.history(record, Action.MOVE, at=at, new={"pid": record.values.get("pid", 0)}, by=by)

    # --- the chat -----------------------------------------------------------------------------------------

    def conversation(
        self,
        *,
        configuration: str,
        at: int,
        skill: str = "",
        page: Record | None = None,
        editor: int = 1,
        title: str = "",
        language: str = "de",
    ) -> Conversation:
        """A conversation of the AI chat, opened by an editor."""
        self.configuration(configuration, configuration.replace("-", " ").title(), at=at)
        return Conversation(self, configuration, at=at, skill=skill, page=page, editor=editor, title=title)

    # --- writing ------------------------------------------------------------------------------------------

    def flush(self, *, history_before: int | None = None) -> None:
        """Write the finished records and every queued row; in MOMENTS order the sys_history rows inserted
        before `history_before` (every one with None): the caller promises that none inserted earlier is to
        come."""
        self._number_waiting(history_before)
        for record in self._records.values():
            record.written = True
            if not record.gone:
                table = schema.pages if record.table == "pages" else schema.tt_content
                self.rows.add(
                    table,
                    _COLUMN_DEFAULTS[table.name]
                    | record.values
                    | {"uid": record.uid, "deleted": int(record.deleted), "hidden": int(record.hidden)},
                )
        self._records.clear()
        self.rows.flush()

    def finish(self) -> None:
        """Write everything; the installation is complete."""
        self.flush(history_before=None)
        self.rows.finish()
