"""What the URL carries: ?run=<uuid>, ?conversation=<uid>, ?language=<code>, ?runs=<JSON filter> and the
Rates page's ?tab=, ?range=, ?from=, ?to=, ?grain=, ?group=, ?marker=, each validated.

A value that does not validate is dropped and reported, never used: a run uuid (or the short id the Runs
table shows: its first 8 or more hex digits) must match its pattern before it reaches a query, a
conversation uid must be a positive integer, a language one of the codes offered, and the Runs filter is a
JSON object whose every key and value is checked. The Rates page's parameters are read as one of the values
offered (or a date) and fall back to the page's default silently: a link that names a tab or a release no
longer there still opens the page. Nothing is ever unpickled or evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from adapters import clock
from adapters.runs import COUNTED_METRICS, EDIT_SCOPES, NO_OUTCOME, NO_SKILL, OUTCOMES, SHORT_ID, RunFilter
from core import json_text
from core.formatting import NO_SKILL as NO_SKILL_TEXT
from dashboard.queries.runs import STATUSES

RUN = "run"
CONVERSATION = "conversation"
RUNS_FILTER = "runs"
LANGUAGE = "language"
# The Rates page's tab and filter bar (dashboard/components/filter_bar.py).
TAB, RANGE, FROM, TO, GRAIN, GROUP, MARKER = "tab", "range", "from", "to", "grain", "group", "marker"
# The greatest uid a TYPO3 table holds (an unsigned int): a conversation uid beyond it is none.
MAX_UID = 2**32 - 1
MAX_CHOICE_CHARS = 200  # a tab, a preset, a group or a release date; anything longer is none of ours

# A uuid's shape: a hyphen where it has one, a hex digit elsewhere. A run reference is its start: the short id
# the Runs table shows, or more of it.
UUID_SHAPE = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
HEX_DIGITS = frozenset("0123456789abcdef")
FLAGS = ("claim", "denial", "notice", "disagreement")  # the Runs filter's yes/no keys
KEYS = {
    "configuration",
    "status",
    "outcome",
    "from",
    "to",
    "skill",
    "uuid",
    "ended_from",
    "ended_to",
    "counted",
    "scope",
    *FLAGS,
}
MAX_PARAM_CHARS = 500  # a filter is a few short values; anything longer is not one of ours
MAX_IDENTIFIER_CHARS = 150  # tx_nrllm_agentrun.configuration_identifier is varchar(150)


@dataclass(frozen=True)
class Param:
    """A query parameter as read: its valid value (None when absent or invalid) and why it was refused."""

    value: Any
    refused: str = ""


def _raw(name: str) -> str | None:
    value = st.query_params.get(name)
    return value if isinstance(value, str) else None


def run_reference(text: str) -> str | None:
    """A run's uuid or the start of it (at least the short id's 8 hex digits), lower-cased; None for text
    that is neither."""
    candidate = text.strip().lower()
    if not SHORT_ID <= len(candidate) <= len(UUID_SHAPE):
        return None
    shaped = all(
        (char == "-") if shape == "-" else (char in HEX_DIGITS)
        for char, shape in zip(candidate, UUID_SHAPE, strict=False)
    )
    return candidate if shaped else None


def run_uuid() -> Param:
    """?run=: a run uuid in lower-case canonical form, or its short id (the Run page looks the run up)."""
    raw = _raw(RUN)
    if raw is None or raw == "":
        return Param(None)
    found = run_reference(raw)
    if found is not None:
        return Param(found)
    return Param(None, "?run= is not a run uuid; it was ignored")


def conversation_uid() -> Param:
    """?conversation=: a positive integer."""
    raw = _raw(CONVERSATION)
    if raw is None or raw == "":
        return Param(None)
    if raw.isascii() and raw.isdigit() and 0 < len(raw) <= len(str(MAX_UID)) and 0 < int(raw) <= MAX_UID:
        return Param(int(raw))
    return Param(None, "?conversation= is not a conversation uid; it was ignored")


def language(offered: Sequence[str]) -> Param:
    """?language=: one of the offered language codes."""
    raw = _raw(LANGUAGE)
    if raw is None or raw == "":
        return Param(None)
    if raw in offered:
        return Param(raw)
    return Param(None, f"?language= is not one of {', '.join(offered)}; it was ignored")


def runs_filter() -> Param:
    """?runs=: {"configuration", "status", "outcome", "skill", "uuid": str, "from", "to", "ended_from",
    "ended_to": "YYYY-MM-DD", "counted": a metric, "scope": an edit scope, "claim", "denial", "notice",
    "disagreement": true}, each optional."""
    raw = _raw(RUNS_FILTER)
    if raw is None or raw == "":
        return Param(RunFilter())
    try:
        chosen = parse_runs_filter(raw)
    except ValueError as error:
        return Param(RunFilter(), f"?runs= was ignored: {error}")
    return Param(chosen)


def parse_runs_filter(raw: str) -> RunFilter:
    """The Runs filter from its JSON text; ValueError naming the first thing that is wrong."""
    if len(raw) > MAX_PARAM_CHARS:
        raise ValueError("too long")
    try:
        data = json_text.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError("not JSON") from error
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    unknown = set(data) - KEYS
    if unknown:
        # Not echoed: the page shows this text, and a link's keys are anybody's words.
        keys = "an unknown key" if len(unknown) == 1 else f"{len(unknown)} unknown keys"
        raise ValueError(f"{keys}; it takes {', '.join(sorted(KEYS))}")
    configuration = _string(data, "configuration")
    if configuration is not None and len(configuration) > MAX_IDENTIFIER_CHARS:
        raise ValueError("configuration is too long")
    status = _string(data, "status")
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    outcome = _string(data, "outcome")
    if outcome is not None and outcome not in (*OUTCOMES, NO_OUTCOME):
        raise ValueError(f"outcome must be one of {', '.join((*OUTCOMES, NO_OUTCOME))}")
    started_from, started_to = _day(data, "from"), _day(data, "to")
    if (started_from is None) != (started_to is None):
        raise ValueError("from and to go together")  # the days the runs started in, a pair as the page has it
    if started_from and started_to and started_from > started_to:
        raise ValueError("from is after to")
    ended_from, ended_to = _day(data, "ended_from"), _day(data, "ended_to")
    if ended_from and ended_to and ended_from > ended_to:
        raise ValueError("ended_from is after ended_to")
    skill = _string(data, "skill")
    if skill is not None and len(skill) > MAX_IDENTIFIER_CHARS:
        raise ValueError("skill is too long")
    uuid = _string(data, "uuid")
    if uuid is not None and run_reference(uuid) is None:
        raise ValueError(f"uuid must be a run uuid or its first {SHORT_ID} hex digits")
    counted = _string(data, "counted")
    if counted is not None and counted not in COUNTED_METRICS:
        raise ValueError(f"counted must be one of {', '.join(COUNTED_METRICS)}")
    scope = _string(data, "scope")
    if scope is not None and scope not in EDIT_SCOPES:
        raise ValueError(f"scope must be one of {', '.join(EDIT_SCOPES)}")
    flags = {name: _flag(data, name) for name in FLAGS}
    return RunFilter(
        configuration,
        status,
        outcome,
        started_from,
        started_to,
        skill=NO_SKILL if skill == NO_SKILL_TEXT else skill,
        uuid=None if uuid is None else run_reference(uuid),
        ended_from=ended_from,
        ended_to=ended_to,
        counted=counted,
        scope=scope,
        **flags,
    )


def runs_filter_json(chosen: RunFilter) -> str:
    """The filter as the JSON ?runs= carries; only the keys that are set."""
    data: dict[str, str | bool] = {}
    if chosen.configuration:
        data["configuration"] = chosen.configuration
    if chosen.status:
        data["status"] = chosen.status
    if chosen.outcome:
        data["outcome"] = chosen.outcome
    if chosen.started_from:
        data["from"] = chosen.started_from.isoformat()
    if chosen.started_to:
        data["to"] = chosen.started_to.isoformat()
    if chosen.ended_from:
        data["ended_from"] = chosen.ended_from.isoformat()
    if chosen.ended_to:
        data["ended_to"] = chosen.ended_to.isoformat()
    if chosen.skill is not None:
        data["skill"] = NO_SKILL_TEXT if chosen.skill == NO_SKILL else chosen.skill
    if chosen.uuid:
        data["uuid"] = chosen.uuid
    if chosen.counted:
        data["counted"] = chosen.counted
    if chosen.scope:
        data["scope"] = chosen.scope
    for name in FLAGS:
        if getattr(chosen, name):
            data[name] = True
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


def runs_link(chosen: RunFilter) -> str:
    """A link (relative to any page) to the Runs page with this filter."""
    return f"runs?{urlencode({RUNS_FILTER: runs_filter_json(chosen)})}"


def runs_filter_text() -> str | None:
    """?runs= as the URL holds it, unread; None without it."""
    return _raw(RUNS_FILTER)


def keep_runs_filter(chosen: RunFilter) -> str | None:
    """Put the filter into the URL (or take it out when nothing is filtered); what ?runs= holds then."""
    text = runs_filter_json(chosen)
    if text == "{}":
        if RUNS_FILTER in st.query_params:
            del st.query_params[RUNS_FILTER]
        return None
    if st.query_params.get(RUNS_FILTER) != text:
        st.query_params[RUNS_FILTER] = text
    return text


def drop(names: Sequence[str]) -> None:
    """Take these parameters (another page's) out of the URL."""
    for name in names:
        if name in st.query_params:
            del st.query_params[name]


def choice(name: str, offered: Sequence[str], default: str) -> str:
    """?name=: one of the offered values, else `default` (absent or not offered: silently)."""
    raw = _raw(name)
    if raw is None or len(raw) > MAX_CHOICE_CHARS or raw not in offered:
        return default
    return raw


def day(name: str) -> date | None:
    """?name=: a date YYYY-MM-DD from 1970 up to the year 9000, else None (silently)."""
    raw = _raw(name)
    if raw is None or len(raw) != len("YYYY-MM-DD"):
        return None
    try:
        found = date.fromisoformat(raw)
    except ValueError:
        return None
    return found if in_calendar(found) else None


def in_calendar(day: date) -> bool:
    """Whether the day is within runrecord's calendar (adapters.clock: from 1970 up to the year 9000)."""
    return clock.EARLIEST.date() <= day < clock.LATEST.date()


def keep(name: str, value: str | None, default: str | None = None) -> None:
    """Put ?name=value into the URL, or take it out when it is the default (or None), so that a plain link
    stays plain."""
    if value is None or value == default:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value


def _string(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _flag(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false")
    return value


def _day(data: dict[str, Any], key: str) -> date | None:
    value = data.get(key)
    if value is None:
        return None
    wrong = f"{key} must be a date YYYY-MM-DD from 1970 up to the year 9000"
    if not isinstance(value, str):
        raise ValueError(wrong)
    try:
        found = date.fromisoformat(value)
    except ValueError as error:
        raise ValueError(wrong) from error
    if not in_calendar(found):
        raise ValueError(wrong)
    return found
