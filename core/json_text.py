"""Stored JSON read into Python values whose every text can be shown, written and judged.

JSON may escape half a surrogate pair alone ("\\ud800", valid JSON by RFC 8259's grammar, section 8.2, and no
character): json reads it as a lone surrogate, which no UTF-8 text can hold, so that printing it, writing
it or handing it to a page fails. Read here, each lone surrogate is U+FFFD, in keys and values alike; a
pair written as two escapes is the one character it names, as json reads it.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Where the text holds neither a surrogate nor an escape of one, json gives none: its value is kept as read.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def well_formed(text: str) -> str:
    """The text with U+FFFD in place of each lone surrogate."""
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def loads(text: str | bytes) -> Any:
    """json.loads, with each lone surrogate of its texts as U+FFFD; raises as json.loads does."""
    value = json.loads(text)
    # Bytes read as json reads them (UTF-8, -16 or -32, surrogates encoded as bytes let through).
    raw = text if isinstance(text, str) else text.decode(json.detect_encoding(text), "surrogatepass")
    return _mended(value) if _SURROGATE_ESCAPE.search(raw) or _LONE_SURROGATE.search(raw) else value


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {well_formed(key): _mended(item) for key, item in value.items()}
    return value
