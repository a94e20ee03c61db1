"""A conversation as values, the way measure-rates hands one to core: its stored messages and its runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from core.answers import ConversationInput, conversation_input, stored_message
from core.measured_runs import EventCounts, RunRow
from core.time import DAY_S

DAY = DAY_S

T = int(datetime(2026, 10, 14, 12, 0, tzinfo=UTC).timestamp())  # a Wednesday


def unix(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


class Chat:
    """A conversation's stored messages and runs, as the job hands them to core."""

    def __init__(self, skill: str = "seo-check", record: str | None = None) -> None:
        self.skill = skill
        self.record = record
        self.messages: list[tuple[int, int, str, int, str | None]] = []
        self.approval_run_uuid = ""

    def say(self, role: str, content: str, at: int, **extra: object) -> int:
        sorting = len(self.messages)
        payload = json.dumps({"role": role, "content": content, **extra})
        self.messages.append((100 + sorting, sorting, role, at, payload))
        return sorting

    def broken(self, role: str, at: int) -> None:
        sorting = len(self.messages)
        self.messages.append((100 + sorting, sorting, role, at, "{not json"))

    def value(self) -> ConversationInput:
        stored = [stored_message(*m) for m in self.messages]
        return conversation_input(7, self.skill, self.approval_run_uuid, self.record, stored)


def a_run(
    uid: int, *, status: str = "completed", ended_at: int = T, started_at: int = 0, **counts: int
) -> RunRow:
    return RunRow(
        uid, f"run-{uid}", status, "content-assistant", ended_at, EventCounts(**counts), started_at=started_at
    )
