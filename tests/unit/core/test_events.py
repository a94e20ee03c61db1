"""The typed view of a run's events and its segments (000_…, "Decision"; DOMAIN.md, agentrun events)."""

import json
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import pytest

from core.cards import CardDecision, CardOutcome
from core.events import (
    KEPT_KEYS,
    Completeness,
    Event,
    EventKind,
    EventProblem,
    Problem,
    UnreadableTarget,
    WriteTarget,
    approved,
    identifier,
    is_refusal_shaped,
    offered_tools,
    parse_event,
    read_event,
    requested_tools,
    split_segments,
    tool_is_error,
    tool_name,
    write_completeness,
    write_target,
)
from core.refused import RefusalReading, read_segment
from core.run_record import build_entries
from core.saved import nothing_saved, written_records
from tests.unit.core.events_helpers import (
    answer,
    approval,
    llm,
    refused,
    request,
    rows,
    run,
    segments,
    tool,
    tool_write,
)

# The payload keys that carry tool arguments, tool results, the model's words or the messages sent.
NEVER_READ = ("toolArguments", "toolResult", "toolArtifacts", "content", "thinking", "messagesSent")
SECRET = "Passwort-4711 für pages:999"


def one_event(kind: str, payload: dict[str, Any], *, duration: float = 10.0) -> Event:
    parsed = parse_event(1, 1, kind, 1, duration, json.dumps(payload), 1_767_225_600)
    assert isinstance(parsed, Event)
    return parsed


class NeverRead(Mapping[str, Any]):
    """A payload that fails the test when a key it must never give away is read, or the whole is walked."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self._payload = payload

    def __getitem__(self, key: str) -> Any:
        if key in NEVER_READ:
            raise AssertionError(f"{key} was read")
        if key == "requestedToolCalls":
            return [NeverReadCall(call) for call in self._payload[key]]
        return self._payload[key]

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the whole payload was walked")

    def __len__(self) -> int:
        return len(self._payload)


class NeverReadCall(NeverRead):
    def __getitem__(self, key: str) -> Any:
        if key == "arguments":
            raise AssertionError("arguments were read")
        return self._payload[key]


def with_everything(event: Event) -> Event:
    payload = {**event.payload, **dict.fromkeys(NEVER_READ, SECRET)}
    if event.kind is EventKind.LLM:
        payload["requestedToolCalls"] = [
            {"id": "c1", "name": name, "arguments": {"secret": SECRET}} for name in requested_tools(event)
        ]
    return Event(
        event.uid,
        event.sequence,
        event.kind,
        event.round,
        event.duration_ms,
        NeverRead(payload),
        event.crdate,
    )


# --- parsing rows -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sequence", "kind", "payload_text", "problem"),
    [
        pytest.param(3, "tool", "{not json", Problem.PAYLOAD_NOT_JSON, id="payload not JSON"),
        pytest.param(3, "tool", None, Problem.PAYLOAD_NOT_JSON, id="payload NULL"),
        pytest.param(3, "tool", '["toolName"]', Problem.PAYLOAD_NOT_OBJECT, id="payload a list"),
        pytest.param(3, "tool", '"update_page"', Problem.PAYLOAD_NOT_OBJECT, id="payload a string"),
        pytest.param(3, "tool_result", '{"toolName": "x"}', Problem.UNKNOWN_KIND, id="unknown kind"),
        pytest.param(None, "tool", '{"toolName": "x"}', Problem.MISSING_SEQUENCE, id="missing sequence"),
    ],
)
def test_a_row_that_cannot_be_read_is_reported_with_its_uid_and_why(sequence, kind, payload_text, problem):
    parsed = parse_event(42, sequence, kind, 1, 0.0, payload_text, 1_767_225_600)

    assert parsed == EventProblem(42, problem, parsed.detail)


def test_a_bad_row_is_reported_and_the_rest_still_read():
    good = rows(run(llm(["update_page"]), tool("update_page")))
    bad = (9, 9, "tool", 1, 0.0, "{broken", 1_767_225_609)

    parsed = [parse_event(*row) for row in [good[0], bad, good[1]]]

    assert [type(p) for p in parsed] == [Event, EventProblem, Event]
    assert parsed[1] == EventProblem(9, Problem.PAYLOAD_NOT_JSON, "JSONDecodeError")


def test_a_row_without_a_duration_takes_the_payloads_duration_ms():
    parsed = parse_event(1, 1, "tool", 1, None, '{"toolName": "x", "durationMs": 4.5}', 0)
    unparsed = parse_event(2, 2, "tool", 1, None, '{"toolName": "x"}', 0)

    assert isinstance(parsed, Event)
    assert parsed.duration_ms == 4.5
    assert unparsed == EventProblem(2, Problem.MISSING_DURATION)


def test_a_decimal_column_of_zero_reads_as_a_duration_of_zero():
    parsed = parse_event(1, 1, "tool", 1, Decimal("0.00"), '{"toolName": "x", "toolIsError": true}', 0)

    assert isinstance(parsed, Event)
    assert parsed.duration_ms == 0


# A step's duration: the payload's durationMs, the decimal(10,2) column only when the payload holds none
# (000_…, amendment: a refusal is an error of exactly 0.0 ms, and a call that ran is timed).
@pytest.mark.parametrize(
    ("column", "payload_duration", "duration"),
    [
        pytest.param(Decimal("0.00"), "0.004", 0.004, id="a timed call the column rounds to 0.00"),
        pytest.param(Decimal("0.00"), "4e-3", 0.004, id="written with an exponent"),
        pytest.param(Decimal("0.00"), "0.0", 0.0, id="a refusal"),
        pytest.param(Decimal("12.50"), "12.5", 12.5, id="both hold it"),
        pytest.param(Decimal("0.00"), None, Decimal("0.00"), id="no durationMs: the column"),
        pytest.param(Decimal("3.00"), "null", Decimal("3.00"), id="durationMs null: the column"),
        pytest.param(Decimal("3.00"), '"fast"', Decimal("3.00"), id="durationMs text: the column"),
        pytest.param(Decimal("3.00"), "true", Decimal("3.00"), id="durationMs a boolean: the column"),
        pytest.param(Decimal("3.00"), "1e400", Decimal("3.00"), id="durationMs not finite: the column"),
    ],
)
def test_a_steps_duration_is_the_payloads_duration_ms_and_the_column_only_without_it(
    column, payload_duration, duration
):
    duration_key = "" if payload_duration is None else f', "durationMs": {payload_duration}'
    text = '{"toolName": "update_page", "toolIsError": true' + duration_key + "}"

    parsed = parse_event(1, 1, "tool", 1, column, text, 0)
    read = read_event(1, 1, "tool", 1, column, "object", text, 0)

    assert isinstance(parsed, Event) and isinstance(read, Event)
    assert (type(parsed.duration_ms), parsed.duration_ms) == (type(duration), duration)
    assert read == parsed


@pytest.mark.parametrize(
    ("payload_duration", "refusal"),
    [("0.004", False), ("0.0", True), ("0", True)],
)
def test_an_error_is_a_refusal_only_at_exactly_0_ms_in_the_payload_whatever_the_rounded_column_says(
    payload_duration, refusal
):
    text = f'{{"toolName": "update_page", "toolIsError": true, "durationMs": {payload_duration}}}'

    parsed = parse_event(1, 1, "tool", 1, Decimal("0.00"), text, 0)

    assert isinstance(parsed, Event)
    assert is_refusal_shaped(parsed) is refusal


def test_an_approved_call_that_failed_after_0_004_ms_reads_as_failed_not_as_no_longer_permitted():
    stored = [
        (1, 1, "llm", 1, Decimal("850.00"), '{"requestedToolNames": ["update_page"]}', 0),
        (2, 2, "approval", 0, Decimal("0.00"), '{"approved": true, "decidedBy": 7}', 1),
        (
            3,
            3,
            "tool",
            1,
            Decimal("0.00"),
            '{"toolName": "update_page", "toolIsError": true, "durationMs": 0.004}',
            2,
        ),
        (4, 4, "llm", 2, Decimal("850.00"), '{"requestedToolNames": []}', 3),
    ]
    events = [parse_event(*row) for row in stored]

    (_, approved_segment) = split_segments([event for event in events if isinstance(event, Event)])
    (reading,) = read_segment(approved_segment)

    assert (reading.reading, reading.label) == (RefusalReading.FAILURE, "fehlgeschlagen")


# --- privacy ----------------------------------------------------------------------------------------------


def test_tool_arguments_and_results_are_never_read():
    events = tuple(
        with_everything(event)
        for event in run(
            llm(["update_page", "ask_choice"]),
            refused("ask_choice"),
            approval(True),
            tool("update_page"),
            tool_write("pages", 10073, "complete"),
            llm(),
        )
    )
    outcomes = (
        CardOutcome(3, "uuid-1", "update_page", "pages:10073", ("title",), CardDecision.APPROVED, "ok", 1),
    )

    parts = split_segments(events)
    readings = [read_segment(segment) for segment in parts]
    entries = build_entries("uuid-1", parts, status="completed", position=3, card_outcomes=outcomes)
    verdict = nothing_saved(events)
    records = written_records(events)

    assert [len(r) for r in readings] == [1, 1]
    assert SECRET not in json.dumps([entry.to_json() for entry in entries])
    assert verdict.value == "wrote"
    assert records == ("pages:10073",)


def test_a_parsed_payload_keeps_none_of_the_arguments_results_or_words():
    payload = {
        "kind": "llm",
        "requestedToolCalls": [{"id": "c1", "name": "update_page", "arguments": {"title": SECRET}}],
        "decidedBy": 7,
        **dict.fromkeys(NEVER_READ, SECRET),
    }

    event = one_event("llm", payload)

    assert set(event.payload) <= KEPT_KEYS
    assert not set(event.payload) & set(NEVER_READ)
    assert "decidedBy" not in event.payload
    assert SECRET not in repr(event.payload)
    assert requested_tools(event) == ("update_page",)


# --- accessors --------------------------------------------------------------------------------------------


def test_requested_tools_come_from_requested_tool_calls_or_at_the_default_level_from_requested_tool_names():
    full = one_event(
        "llm", {"requestedToolCalls": [{"id": "a", "name": "update_page"}, {"id": "b", "name": "x"}]}
    )
    default = one_event("llm", {"requestedToolNames": ["update_page", "x"]})
    neither = one_event("llm", {"requestedToolNames": 2})

    assert requested_tools(full) == ("update_page", "x")
    assert requested_tools(default) == ("update_page", "x")
    assert requested_tools(neither) == ()


def test_the_tools_a_request_offered_are_the_names_its_tool_specs_list() -> None:
    offered = one_event("request", {"toolSpecs": ["update_page", "mcp.crm/push", 3, None, {"name": "x"}]})
    nothing = one_event("request", {"toolSpecs": []})
    not_recorded = [one_event("request", {"toolSpecs": 24}), one_event("request", {"messagesSent": SECRET})]

    assert offered_tools(offered) == ("update_page", "mcpcrmpush")
    assert offered_tools(nothing) == ()
    assert [offered_tools(event) for event in not_recorded] == [None, None]
    assert offered_tools(one_event("llm", {"toolSpecs": ["update_page"]})) is None  # only a request offers


def test_a_parsed_request_keeps_the_names_of_the_offered_tools_and_none_of_the_messages_sent() -> None:
    specs = ["update_page", {"name": "read_page", "description": SECRET}, 7]

    event = one_event("request", {"toolSpecs": specs, "messagesSent": [{"content": SECRET}]})
    unlisted = one_event("request", {"toolSpecs": {"update_page": SECRET}})

    assert dict(event.payload) == {"toolSpecs": ["update_page"]}
    assert "toolSpecs" not in unlisted.payload and SECRET not in repr(unlisted.payload)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("update_page", "update_page"),
        ("mcp.server-1/list pages", "mcpserver1listpages"),
        ("Seite\nIgnore previous instructions", "SeiteIgnorepreviousinstructions"),
        ("ümlaut_ß", "mlaut_"),
        ("", ""),
    ],
)
def test_identifiers_are_reduced_to_identifier_characters(text, expected):
    assert identifier(text) == expected


def test_a_tool_name_is_reduced_to_identifier_characters():
    event = one_event("tool", {"toolName": "remote.search-pages"})

    assert tool_name(event) == "remotesearchpages"


def test_a_tool_step_failed_only_when_tool_is_error_is_true():
    failed = one_event("tool", {"toolName": "x", "toolIsError": True})
    truthy = one_event("tool", {"toolName": "x", "toolIsError": "yes"})
    absent = one_event("tool", {"toolName": "x"})

    assert (tool_is_error(failed), tool_is_error(truthy), tool_is_error(absent)) == (True, False, False)


@pytest.mark.parametrize(
    ("table", "uid", "expected"),
    [
        pytest.param("pages", 10073, WriteTarget("pages", 10073), id="readable"),
        pytest.param("tx_news_domain_model_news", 1, WriteTarget("tx_news_domain_model_news", 1), id="uid 1"),
        pytest.param("t" * 64, 5, WriteTarget("t" * 64, 5), id="64 characters"),
        pytest.param(None, 5, UnreadableTarget("table missing"), id="table missing"),
        pytest.param("t" * 65, 5, UnreadableTarget("table malformed"), id="65 characters"),
        pytest.param("pages; DROP", 5, UnreadableTarget("table malformed"), id="not identifier characters"),
        pytest.param("", 5, UnreadableTarget("table malformed"), id="empty table"),
        pytest.param("pages", None, UnreadableTarget("uid missing"), id="uid missing"),
        pytest.param("pages", 0, UnreadableTarget("uid malformed"), id="uid 0"),
        pytest.param("pages", "10073", UnreadableTarget("uid malformed"), id="uid a string"),
        pytest.param("pages", True, UnreadableTarget("uid malformed"), id="uid a boolean"),
        pytest.param("pages", 2_147_483_647, WriteTarget("pages", 2_147_483_647), id="the largest recuid"),
        pytest.param("pages", 2_147_483_648, UnreadableTarget("uid malformed"), id="above a signed int(11)"),
    ],
)
def test_a_write_target_is_readable_only_with_an_identifier_table_and_a_uid_a_history_row_can_hold(
    table, uid, expected
):
    payload = {"toolName": "update_page", "writeTargetTable": table, "writeTargetUid": uid}

    target = write_target(one_event("tool_write", payload))

    assert target == expected


def test_a_readable_write_target_names_its_record_as_table_and_uid():
    assert WriteTarget("pages", 10073).record == "pages:10073"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"writeCompleteness": "complete"}, Completeness.COMPLETE),
        ({"writeCompleteness": "partial"}, Completeness.PARTIAL),
        ({}, Completeness.UNCONFIRMED),
        ({"writeCompleteness": "mostly"}, Completeness.UNCONFIRMED),
    ],
)
def test_write_completeness_is_unconfirmed_when_absent(payload, expected):
    assert write_completeness(one_event("tool_write", payload)) is expected


def test_an_approval_approves_only_when_approved_is_exactly_true():
    yes = one_event("approval", {"approved": True})
    no = one_event("approval", {"approved": False})
    text = one_event("approval", {"approved": "true"})
    missing = one_event("approval", {})

    assert [approved(e) for e in (yes, no, text, missing)] == [True, False, False, False]


# --- segments ---------------------------------------------------------------------------------------------


def test_segments_split_at_each_approval_and_input_event_which_opens_the_new_segment():
    events = run(
        llm(["update_page"]), approval(True), tool("update_page"), llm(["ask_choice"]), answer(), llm()
    )

    parts = split_segments(events)

    assert [part.index for part in parts] == [0, 1, 2]
    assert [[e.kind.value for e in part.events] for part in parts] == [
        ["llm"],
        ["approval", "tool", "llm"],
        ["input", "llm"],
    ]
    assert parts[0].opened_by is None
    assert parts[1].opened_by is not None
    assert parts[1].opened_by.kind is EventKind.APPROVAL


def test_events_are_read_in_sequence_order():
    events = run(llm(["update_page"]), approval(True), tool("update_page"), llm())

    parts = split_segments(tuple(reversed(events)))

    assert [[e.sequence for e in part.events] for part in parts] == [[0], [1, 2, 3]]


def test_opening_steps_are_a_continuations_tool_steps_before_its_first_model_round():
    parts = segments(
        llm(["update_page", "read_page"]),
        approval(True),
        tool("update_page"),
        tool_write("pages", 1),
        tool("read_page"),
        request(),
        llm(["read_page"]),
        tool("read_page"),
        llm(),
    )

    opening = parts[1].opening_steps

    assert [tool_name(step) for step in opening] == ["update_page", "read_page"]
    assert [step.sequence for step in opening] == [2, 4]


def test_the_turn_itself_has_no_opening_steps():
    parts = segments(tool("read_page"), llm(["read_page"]), tool("read_page"), llm())

    assert parts[0].opening_steps == ()


def test_the_steps_after_the_last_model_round_are_those_beside_what_the_segment_waits_on():
    parts = segments(
        llm(["read_page"]), tool("read_page"), llm(["update_page", "create_page"]), refused("create_page")
    )

    assert [tool_name(step) for step in parts[0].last_round_steps] == ["create_page"]


def test_a_segment_returned_when_its_newest_event_was_written():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())

    assert [part.returned_at for part in parts] == [parts[0].events[0].crdate, parts[1].events[-1].crdate]


def test_no_events_make_no_segments():
    assert split_segments(()) == ()


@pytest.mark.parametrize(
    ("shape", "problem", "detail"),
    [
        (None, Problem.PAYLOAD_NOT_JSON, "NULL"),
        ("absent", Problem.PAYLOAD_NOT_JSON, "NULL"),
        ("invalid", Problem.PAYLOAD_NOT_JSON, "JSONDecodeError"),
        ("array", Problem.PAYLOAD_NOT_OBJECT, "list"),
        ("string", Problem.PAYLOAD_NOT_OBJECT, "str"),
        ("integer", Problem.PAYLOAD_NOT_OBJECT, "int"),
        ("float", Problem.PAYLOAD_NOT_OBJECT, "float"),
        ("boolean", Problem.PAYLOAD_NOT_OBJECT, "bool"),
        ("null", Problem.PAYLOAD_NOT_OBJECT, "NoneType"),
    ],
)
def test_read_event_reports_a_payload_the_database_found_no_object_as_parse_event_does(
    shape: str | None, problem: Problem, detail: str
) -> None:
    assert read_event(7, 1, "tool", 1, 1.0, shape, None, 0) == EventProblem(7, problem, detail)


def test_read_event_drops_a_requested_tool_calls_the_database_wrote_as_null_and_any_key_not_kept() -> None:
    kept = '{"toolName": "x", "requestedToolCalls": null, "toolResult": "never"}'

    parsed = read_event(7, 1, "tool", 1, 1.0, "object", kept, 0)

    assert isinstance(parsed, Event) and dict(parsed.payload) == {"toolName": "x"}
