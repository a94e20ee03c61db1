"""A tool's result and an assistant message's tool calls are never read (DESIGN.md "Privacy"): the database
hands over what a chat message's payload is and its kept keys only (adapters.dialect.payload: kept_message,
payload_shape), `content` only of a user's or the assistant's message, and core.conversation.read_messages
makes of them exactly the messages and problems it makes of the whole payloads.
On SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from adapters import schema
from adapters.conversations import load_conversation, stored_messages
from core.conversation import StoredMessage, read_messages
from tests.db.conftest import empty_installation

SECRET = "Passwort-4711 für pages:999"
RUN = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
CONVERSATION = 1


def _kv(**values: Any) -> str:
    return json.dumps(values)


TOOL_CALLS = [{"id": "c1", "type": "function", "function": {"name": "update_page", "arguments": SECRET}}]

# Payload texts as the chat could store them, and as it never would: (id, text or None).
PAYLOADS: list[tuple[str, str | None]] = [
    ("a user's message", _kv(role="user", content="Bitte ändere den Titel von Seite 12")),
    (
        "the assistant's answer with its notice and its tool calls",
        _kv(
            role="assistant",
            content="Ich habe den Titel geändert.",
            notice="nothingSaved",
            noticeArgs=["pages:12", "tt_content:7"],
            runUuid=RUN,
            segment=2,
            tool_calls=TOOL_CALLS,
        ),
    ),
    ("a tool's result", _kv(role="tool", tool_call_id="c1", name="update_page", content=SECRET)),
    ("a tool's result in parts", _kv(role="tool", content=[{"type": "text", "text": SECRET}])),
    ("a tool's result that is an object", _kv(role="tool", content={"rows": [SECRET]})),
    ("a tool's result with a NUL", '{"role": "tool", "content": "a\\u0000b", "runUuid": "x"}'),
    (
        "a user's message in parts",
        _kv(
            role="user", content=[{"type": "text", "text": "Hallo"}, {"type": "image_url", "image_url": "x"}]
        ),
    ),
    (
        "notice arguments as text",
        _kv(role="assistant", notice="runFinishedOutside", noticeArgs="pages:1, pages:2"),
    ),
    ("a segment with a fraction", '{"role": "assistant", "content": "a", "segment": 2.0}'),
    ("a segment as text", _kv(role="assistant", content="a", segment="2")),
    ("no role", _kv(content=SECRET)),
    ("a role no text", _kv(role=["user"], content=SECRET)),
    ("an unknown role", _kv(role="system", content=SECRET)),
    ("a role escaped", '{"role": "\\u0074ool", "content": "' + SECRET + '"}'),
    ("a key escaped", '{"r\\u006fle": "assistant", "c\\u006fntent": "x"}'),
    ("unicode escaped", '{"role": "user", "content": "\\u00e9crire \\ud83d\\udcdd"}'),
    ("a lone surrogate in a user's text", '{"role": "user", "content": "a\\ud800b"}'),
    ("a lone surrogate in a tool's result", '{"role": "tool", "content": "\\ud800", "runUuid": "x"}'),
    ("unicode raw", '{"role": "assistant", "content": "écrire 📝", "notice": "é"}'),
    ("white space", '\n {\n  "role" :\t"user" ,\n  "content" : "x"\n }\n'),
    ("a key twice", '{"role": "tool", "content": "Ergebnis", "role": "assistant"}'),
    ("empty object", "{}"),
    ("NULL", None),
    ("not JSON", "{role: user"),
    ("empty text", ""),
    ("a JSON array", json.dumps([{"role": "tool", "content": SECRET}])),
    ("a JSON string", json.dumps(SECRET)),
    ("a JSON number", "42"),
    ("a JSON null", "null"),
]

# Where a dialect cannot give what Python gives for the whole payload.
DIFFERS = {
    (
        "sqlite",
        "a key twice",
    ): "SQLite gives a key's first value, json its last: the content stays in the database",
    (
        "mariadb",
        "a key twice",
    ): "MariaDB gives a key's first value, json its last: the content stays in the database",
    ("mariadb", "a key escaped"): "MariaDB's paths match a key as written, not decoded",
    ("mariadb", "a lone surrogate in a user's text"): "MariaDB's JSON_VALID refuses a lone surrogate escape",
    (
        "mariadb",
        "a lone surrogate in a tool's result",
    ): "MariaDB's JSON_VALID refuses a lone surrogate escape",
    ("postgresql", "a lone surrogate in a user's text"): (
        "PostgreSQL's json functions refuse a lone surrogate escape: read guarded, it is a space, not U+FFFD"
    ),
    ("sqlite", "a key escaped"): "SQLite's paths match a key as written: the content stays in the database",
}

SORTING = {name: index for index, (name, _) in enumerate(PAYLOADS)}


@pytest.fixture(scope="module")
def planted(_installation: Engine) -> Iterator[Engine]:
    """Every payload of PAYLOADS as a message of one conversation (sorting = its place)."""
    empty_installation(_installation)
    rows = [
        {
            "uid": 100 + sorting,
            "pid": 0,
            "conversation": CONVERSATION,
            "sorting": sorting,
            "role": "",
            "payload": text,
            "crdate": 1_767_225_600 + sorting,
        }
        for (_, text), sorting in zip(PAYLOADS, SORTING.values(), strict=True)
    ]
    with _installation.begin() as connection:
        connection.execute(insert(schema.conversation).values(uid=CONVERSATION, status="idle", tstamp=1))
        connection.execute(insert(schema.message), rows)
    yield _installation
    empty_installation(_installation)


def _whole(read: StoredMessage, text: str | None) -> Any:
    """The message and problems read_messages makes of the whole payload."""
    messages, _, problems = read_messages([StoredMessage(read.sorting, text, read.crdate, read.uid)])
    return messages, problems


def _kept(read: StoredMessage) -> Any:
    messages, _, problems = read_messages([read])
    return messages, problems


@pytest.mark.parametrize(("name", "text"), PAYLOADS, ids=[name for name, _ in PAYLOADS])
def test_the_kept_keys_read_in_sql_give_the_same_message_as_reading_the_whole_payload(
    planted: Engine, dialect: str, name: str, text: str | None
) -> None:
    reason = DIFFERS.get((dialect, name))
    with planted.connect() as connection:
        read = {row.sorting: row for row in stored_messages(connection, CONVERSATION)}[SORTING[name]]

    if reason is not None:
        assert _kept(read) != _whole(read, text), f"now exact: drop it from DIFFERS ({reason})"
        pytest.xfail(reason)
    assert _kept(read) == _whole(read, text)


def test_a_tools_result_and_the_assistants_tool_calls_never_leave_the_database(
    planted: Engine, dialect: str
) -> None:
    with planted.connect() as connection:
        read = stored_messages(connection, CONVERSATION)
    conversation = load_conversation(planted, CONVERSATION)

    handed_over = repr(read)
    assert len(read) == len(PAYLOADS)
    for never in (SECRET, "Passwort", "tool_calls", "arguments", "tool_call_id", "update_page"):
        assert never not in handed_over
    answer = next(message for message in conversation.messages if message.run_uuid == RUN)
    assert (answer.content, answer.notice_args, answer.segment) == (
        "Ich habe den Titel geändert.",
        ("pages:12", "tt_content:7"),
        2,
    )
    assert f"message {SORTING['not JSON']}: payload is not JSON" in conversation.problems
    assert f"message {SORTING['a JSON array']}: payload is not an object" in conversation.problems
