"""Conversation (administrators): the transcript as the reader saw it and as the next turn gets it."""

import streamlit as st

from adapters import schema, settings
from adapters.conversations import ConversationNotFoundError
from core.formatting import plural
from dashboard import access, navigation, state
from dashboard.components import (
    answer_readings,
    conversation_picker,
    conversation_state,
    guard,
    language,
    next_turn,
    record_comparison,
    transcript,
)
from dashboard.queries import conversations


def _to_the_list() -> None:
    st.page_link(str(navigation.CONVERSATIONS), label="The newest conversations", icon=":material/forum:")


access.require_administrator()
st.title("Conversation")
version = guard.show([schema.conversation.name, schema.message.name, schema.agentrun.name], key="guard")
if version is None:
    st.stop()
url = state.db_url()

chosen = conversation_picker.show(key="conversation")
if chosen is None:
    _to_the_list()
    st.stop()

try:
    with guard.reading():
        loaded = state.conversation(url, version.runs, chosen, state.own_transcript_skills())
except ConversationNotFoundError:
    st.warning(f"There is no conversation {chosen} in this database.")
    _to_the_list()
    st.stop()

conversation = loaded.conversation
reader_language = language.show(conversations.LANGUAGES, settings.get("reader_language"), key="language")
conversation_state.show(
    conversations.stuck_now(conversation, state.now()),
    conversations.problems(conversation),
    conversations.error_views(conversation, reader_language),
    key="state",
)
st.caption(
    f"Status {conversation.status}; skill {conversation.skill or '—'}; "
    f"{plural(len(conversation.messages), 'message')}, {plural(len(conversation.runs), 'run')}, "
    f"{plural(len(conversation.card_outcomes), 'card outcome')}."
)
answer_readings.show(loaded.readings.values(), key="readings")

reader, model = st.tabs(["As the reader saw it", "What the model is given next turn"])
with reader:
    lines = conversations.reader_transcript(conversation, reader_language, loaded.readings)
    transcript.show(lines, key="reader")
with model:
    next_turn.show(loaded.notes, loaded.turns, key="model")

st.header("Run record: stored and rebuilt from events")
record_comparison.show(loaded.record, key="record")
