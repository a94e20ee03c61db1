"""Conversations (administrators): the newest conversations, a page at a time; choosing one, or typing its
uid, opens it on the Conversation page."""

import streamlit as st

from adapters import schema
from dashboard import access, navigation, state, url_state
from dashboard.components import conversation_list, conversation_picker, guard

access.require_administrator()
st.title("Conversations")
version = guard.show([schema.conversation.name, schema.message.name, schema.agentrun.name], key="guard")
if version is None:
    st.stop()

# Streamlit writes a switch's parameters into the entry of the page it leaves: Back would return here with
# the conversation's uid, which this page does not take.
url_state.drop([url_state.CONVERSATION])
typed = conversation_picker.uid_input(key="find")
if typed is not None:
    navigation.open_conversation(typed)
conversation_list.show(state.db_url(), version.runs, key="recent")
