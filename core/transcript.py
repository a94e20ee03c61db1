"""The transcript as the chat stores it: one message per tx_nrmcpagent_message row (DOMAIN.md, DESIGN.md).

A typed view of the rows a turn sends: position (the row's sorting), role, text, the notice beside an
assistant message, and the run segment that produced it (DESIGN.md, "Chat-side JSON": `runUuid`, `segment`).
`read_message` reads one stored payload and tolerates keys it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.error_codes import Notice

__all__ = [
    "CONTENT_ROLES",
    "KEPT_MESSAGE_KEYS",
    "Notice",
    "Role",
    "TranscriptMessage",
    "UnreadableMessage",
    "read_message",
]


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class TranscriptMessage:
    position: int  # the row's sorting
    role: Role
    content: str
    notice: Notice | None = None
    notice_args: tuple[str, ...] = ()  # e.g. ("pages:10073", "tt_content:10077") beside runFinishedOutside
    run_uuid: str = ""  # the run whose segment produced the message; "" for user messages and older rows
    segment: int | None = None


@dataclass(frozen=True)
class UnreadableMessage:
    position: int
    reason: str


_ROLES = {member.value: member for member in Role}
# The roles whose content is read: a tool's is its result, never read (DESIGN.md, "Privacy").
CONTENT_ROLES = frozenset({Role.USER.value, Role.ASSISTANT.value})
# The keys of a stored payload that read_message reads, the only ones the database hands over
# (adapters.dialect.payload.kept_message), `content` only where the role is one of CONTENT_ROLES: an
# assistant message's tool calls (their arguments) and a tool message's result never leave it.
KEPT_MESSAGE_KEYS = frozenset({"role", "content", "notice", "noticeArgs", "runUuid", "segment", "createdAt"})
_NOTICES = {member.value: member for member in Notice}


def read_message(sorting: int, payload: object) -> TranscriptMessage | UnreadableMessage:
    """A stored payload as a message; a multimodal content keeps its text parts, an unknown notice is none."""
    if not isinstance(payload, Mapping):
        return UnreadableMessage(sorting, "payload is not an object")
    stored_role = payload.get("role")
    role = _ROLES.get(stored_role) if isinstance(stored_role, str) else None
    if role is None:
        return UnreadableMessage(sorting, "role is not user, assistant or tool")
    stored_notice = payload.get("notice")
    notice = _NOTICES.get(stored_notice) if isinstance(stored_notice, str) else None
    run_uuid = payload.get("runUuid")
    segment = payload.get("segment")
    return TranscriptMessage(
        position=sorting,
        role=role,
        # A tool's result is never read (DESIGN.md, "Privacy"): no rule asks it, no page or note shows it.
        content="" if role is Role.TOOL else _text(payload.get("content")),
        notice=notice,
        notice_args=_notice_args(payload.get("noticeArgs")),
        run_uuid=run_uuid if isinstance(run_uuid, str) else "",
        segment=segment if isinstance(segment, int) and not isinstance(segment, bool) else None,
    )


def _notice_args(stored: Any) -> tuple[str, ...]:
    """The records a notice names. The chat stores them as a list of strings (its feedback controller's
    test of a run that finished elsewhere asserts ["pages:10073", "tt_content:10077"], and its script
    formats the list); DOMAIN.md gives one text ("pages:10073"), so a text of them separated by commas is
    read too. Anything else names none."""
    parts = stored.split(",") if isinstance(stored, str) else stored if isinstance(stored, list) else []
    return tuple(part.strip() for part in parts if isinstance(part, str) and part.strip())


def _text(content: Any) -> str:
    # DOMAIN.md: content is a string or a multimodal list; only its text parts are text.
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, Mapping)]
        return "\n".join(text for text in texts if isinstance(text, str))
    return ""
