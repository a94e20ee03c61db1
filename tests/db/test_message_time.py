"""A chat message's createdAt read in SQL gives the time core reads (core.message_time), on every dialect:
the same shape, the same ranges, the same day count."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine, String, literal, select

from adapters import schema
from adapters.dialect import session as sqlsession
from adapters.dialect.instants import created_seconds
from adapters.measure_batch import entries, messages, scratch
from core.message_time import created_seconds as core_seconds
from core.message_time import message_time
from data.builder import Installation

AT = 1_780_000_000

TEXTS = [
    "2026-03-27T11:20:20+01:00",
    "2026-03-27T10:20:20Z",
    "2026-03-27T10:20:20.123Z",
    "2026-01-01T00:30:00-02:30",
    "1970-01-01T00:00:00Z",
    "2037-12-31T23:59:59-23:59",
    "2026-02-30T00:00:00z",
    "2026-03-27t10:20:20.5+00:00",
    "",
    "2026-03-27",
    "2026-03-27 10:20:20Z",
    "2026-03-27T10:20:20",
    "2026-13-01T00:00:00Z",
    "2026-03-27T24:00:00Z",
    "2026-03-27T10:60:00Z",
    "1969-12-31T23:59:59Z",
    "2038-01-01T00:00:00Z",
    "2026-03-27T10:20:20+01:00 ",
    "2026-03-27T10:20:20.Z",
    "2026-03-27T10:20:20.12a3Z",
    "2026-03-27T10:20:20+1:000",
    "2026-03-27T10:20:20+24:00",
    "abcd-ef-ghTij:kl:mnZ",
    "2026-03-27T10:20:20Z\n",
    "2026-03-27T10:20:20+01:00\n",
    "2026-03-27T10:20:20.123456789Z",
    "2026-03-27T10:20:20.1234567890Z",
    "2026-10-20T12:00:00.123456789012345+00:00",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_created_at_read_in_sql_is_the_time_core_reads(installation_engine: Engine, text: str) -> None:
    dialect = installation_engine.dialect.name
    with installation_engine.connect() as connection:
        found = connection.execute(select(created_seconds(dialect, literal(text, String(80))))).scalar()

    assert found == core_seconds(text)


def test_measure_rates_dates_each_message_by_its_created_at_as_core_does_whatever_the_text(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chats = []
        for number, text in enumerate(TEXTS):
            chat = site.conversation(configuration="content-assistant", at=AT + number)
            chat.user("Kannst du die Überschrift ändern?", at=AT + number)
            chat.messages[-1]["payload"] = json.dumps(
                {"role": "user", "content": "Kannst du die Überschrift ändern?", "createdAt": text}
            )
            chat.close()
            chats.append(chat)
        site.finish()

    with installation_engine.begin() as connection:
        scratch.create(connection)
        entries.fill_conversations(connection, after=0, upto=max(chat.uid for chat in chats))
        messages.fill_messages(connection)
        found = dict(
            connection.execute(select(scratch.message.c.conversation, scratch.message.c.crdate)).all()
        )
        saved = dict(connection.execute(select(schema.message.c.conversation, schema.message.c.crdate)).all())
        sqlsession.drop_temporary_tables(connection, scratch.TABLES)

    assert found == {
        chat.uid: message_time(text, saved[chat.uid]) for chat, text in zip(chats, TEXTS, strict=True)
    }
