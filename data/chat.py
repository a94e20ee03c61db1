"""The AI chat side of the builder: conversations with their messages, card outcomes and status, and the PHP
processes their turns run in (see data/agent_run.py for nr-llm's runs, data/builder.py for the installation
itself)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Protocol

from adapters import schema
from core.outcomes import Action
from data.agent_run import Run
from data.payloads import Privacy, compact_json, iso
from data.records import HistoryRow, Record
from data.rows import Row, RowBuffer


class Processing(StrEnum):
    """How the chat runs a turn (DOMAIN.md, "When a row is stamped"), which decides an AI row's tstamp."""

    EXEC = "exec"  # a process forked per request (a message, an approval): stamped when that request came
    WORKER = "worker"  # one long-running ai-chat:worker: stamped when the worker (re)started


class Site(Protocol):
    """What a conversation asks of the installation it is written into (data.builder.Installation)."""

    rows: RowBuffer

    def new_uuid(self) -> str: ...

    def configuration(self, identifier: str, name: str, *, at: int = 0) -> int: ...

    def history_row(
        self,
        record: Record,
        action: Action,
        *,
        at: int,
        new: Mapping[str, Any] | None = None,
        old: Mapping[str, Any] | None = None,
        by: int = 1,
        moment: int | None = None,
        names_run: str = "",
    ) -> HistoryRow: ...


class Processes(Protocol):
    """The PHP processes a conversation's segments run in."""

    @property
    def processing(self) -> Processing: ...

    def started(self, request_at: int) -> int:
        """When the process that handles a request made at `request_at` started (its EXEC_TIME)."""
        ...


class Conversation:
    """A conversation of the AI chat: messages, runs, card outcomes, status."""

    def __init__(
        self,
        site: Site,
        configuration: str,
        *,
        at: int,
        skill: str,
        page: Record | None,
        editor: int,
        title: str,
    ) -> None:
        self.site = site
        self.uid = site.rows.uid(schema.conversation)
        self.configuration = configuration
        self.skill = skill
        self.page = page
        self.editor = editor
        self.crdate = at
        self.tstamp = at
        self.title = title
        self.messages: list[Row] = []
        self.card_outcomes: list[dict[str, Any]] = []
        self.runs: list[Run] = []
        self.status = "idle"
        self.error_code = ""
        self.error_message = ""
        self.approval_run_uuid = ""
        self.approval_decision = ""
        self.last_page_id = 0
        self.stores_run_record = True
        self.run_record_override: str | None = None
        self.card_outcomes_override: str | None = None
        # None: an AI row is stamped when it is written (a test's own stamps); else the processes the chat ran
        # its segments in (data/processes.py).
        self.processes: Processes | None = None
        self.names_runs = False  # an nr-llm that passes the run's uuid as the DataHandler correlation scope

    @property
    def position(self) -> int:
        """The sorting the next message takes."""
        return len(self.messages)

    def _message(self, role: str, content: str, at: int, **extra: Any) -> int:
        sorting = self.position
        payload = {"role": role, "content": content, "createdAt": iso(at), **extra}
        self.messages.append(
            {
                "uid": self.site.rows.uid(schema.message),
                "conversation": self.uid,
                "sorting": sorting,
                "role": role,
                "payload": compact_json(payload),
            }
        )
        self.tstamp = max(self.tstamp, at)
        return sorting

    def user(self, text: str, *, at: int) -> int:
        """The editor sends a message; a card or question still open is left undecided by it."""
        for run in self.runs:
            run.left_undecided("new_message")
        return self._message("user", text, at)

    def assistant(
        self,
        text: str,
        *,
        at: int,
        run: Run | None = None,
        notice: str | None = None,
        notice_args: str | None = None,
    ) -> int:
        """An assistant message; one a run segment produced names the run and the segment."""
        extra: dict[str, Any] = {}
        if notice is not None:
            extra["notice"] = notice
        if notice_args is not None:
            extra["noticeArgs"] = [notice_args]  # the chat stores the records a notice names as a list
        if run is not None:
            extra["runUuid"] = run.uuid
            extra["segment"] = run.segment.index
        return self._message("assistant", text, at, **extra)

    def run(
        self, *, at: int | None = None, privacy: Privacy = Privacy.METADATA, uuid: str | None = None
    ) -> Run:
        """A new nr-llm agent run for the editor's last message; `uuid` replaces the one it would get ('' for
        a run row without one)."""
        run = Run(self, at=self.tstamp + 2 if at is None else at, privacy=privacy, uuid=uuid)
        self.runs.append(run)
        return run

    def end_tour(self, *, at: int) -> None:
        """The editor's × ends the tour: a waiting run is cancelled, its card or question left undecided."""
        for run in self.runs:
            if run.waiting_for is not None:
                run.clock = max(run.clock, float(at))
                run.left_undecided("tour_ended")
                run.status = "cancelled"
                run.termination = "cancelled"
        self.skill = ""
        self.tstamp = max(self.tstamp, at)

    def stuck(self, status: str = "processing", *, since: int) -> None:
        """The conversation stays in a claimed state (processing, locked, tool_loop) from `since`."""
        self.status = status
        self.tstamp = since

    def fail(self, code: str, message: str, *, at: int) -> None:
        """The turn failed with an error code (001_…, 'A failure carries its kind')."""
        self.status = "failed"
        self.error_code = code
        self.error_message = message
        self.tstamp = max(self.tstamp, at)

    def run_record(self) -> list[dict[str, Any]]:
        """The run record the chat stored: the newest 200 entries of every run segment."""
        entries = [entry for run in self.runs for entry in run.planted_entries()]
        entries.sort(key=lambda e: e["at"])  # the chat appends an entry when its segment returns
        return entries[-200:]

    def close(self) -> None:
        """Write the conversation row and its messages."""
        rows = self.site.rows
        waiting = next((run for run in reversed(self.runs) if run.waiting_for), None)
        if waiting is not None and self.status == "idle":
            self.status = "awaiting_approval" if waiting.waiting_for == "card" else "awaiting_input"
            self.approval_run_uuid = waiting.uuid
        activity = self.runs[-1].activity[-100:] if self.runs else []
        view_context: dict[str, Any] = {"pageId": self.page.uid if self.page else 0, "module": "web_layout"}
        if self.last_page_id:
            view_context = {"pageId": 0, "module": "", "lastPageId": self.last_page_id}
        if self.run_record_override is not None:
            run_record: str | None = self.run_record_override
        else:
            run_record = compact_json(self.run_record()) if self.stores_run_record else None
        if self.card_outcomes_override is not None:
            card_outcomes: str | None = self.card_outcomes_override
        else:
            card_outcomes = compact_json(self.card_outcomes) if self.card_outcomes else None
        rows.add(
            schema.conversation,
            {
                "uid": self.uid,
                "be_user": self.editor,
                "title": self.title,
                "message_count": len(self.messages),
                "status": self.status,
                "view_context": compact_json(view_context),
                "skill_identifier": self.skill,
                "activity": compact_json(activity),
                "error_message": self.error_message,
                "error_code": self.error_code,
                "approval_run_uuid": self.approval_run_uuid,
                "approval_decision": self.approval_decision,
                "run_record": run_record,
                "card_outcomes": card_outcomes,
                "tstamp": self.tstamp,
                "crdate": self.crdate,
            },
        )
        # The chat replaces every message row of a conversation at each save, each stamped with the save's
        # time (DOMAIN.md, "The chat: tx_nrmcpagent_message"): a message's own time is its createdAt.
        for message in self.messages:
            message["crdate"] = self.tstamp
            rows.add(schema.message, message)
        for run in self.runs:
            run.store()
