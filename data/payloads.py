"""How the chat writes what it stores: nr-llm's privacy levels, compact JSON, and ISO 8601 times."""

from __future__ import annotations

import json
from datetime import datetime
from enum import IntEnum
from typing import Any
from zoneinfo import ZoneInfo


class Privacy(IntEnum):
    """nr-llm's privacy levels, as far as they change what an event payload keeps (DOMAIN.md)."""

    METADATA = 1  # the default: arguments, results and content replaced by counts
    FULL = 2


# One encoder for every row: json.dumps with options builds a new encoder on each call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    return _COMPACT.encode(value)


# The chat writes createdAt in PHP's DATE_ATOM, in the server's time zone (nr-mcp-agent's
# Conversation::appendMessage): an offset, never "Z".
CHAT_TIME_ZONE = ZoneInfo("Europe/Berlin")


def iso(unix: int) -> str:
    """Unix seconds as the ISO 8601 text the chat stores in createdAt."""
    return datetime.fromtimestamp(unix, CHAT_TIME_ZONE).isoformat(timespec="seconds")
