"""How the chat writes what it stores: nr-llm's privacy levels, compact JSON, and ISO 8601 times."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any


class Privacy(IntEnum):
    """nr-llm's privacy levels, as far as they change what an event payload keeps (DOMAIN.md)."""

    METADATA = 1  # the default: arguments, results and content replaced by counts
    FULL = 2


# One encoder for every row: json.dumps with options builds a new encoder on each call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    return _COMPACT.encode(value)


def iso(unix: int) -> str:
    """Unix seconds as the ISO 8601 text the chat stores in createdAt."""
    return datetime.fromtimestamp(unix, UTC).isoformat().replace("+00:00", "Z")
