"""The reader's language for notices, card outcomes and errors: German (the chat's default reader) or
English, kept in the URL (?language=de|en) so that a reload or a link shows the same language."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.error_codes import Language
from dashboard import url_state

NAMES = {"de": "Deutsch", "en": "English"}


def show(languages: Sequence[Language], default: str, *, key: str) -> Language:
    """The chosen language: the URL's, else `default` (RUNRECORD_READER_LANGUAGE), German when neither; a
    choice other than the default is kept in the URL."""
    param = url_state.language(languages)
    if param.refused:
        st.warning(param.refused)
    fallback = default if default in languages else languages[0]
    in_url = f"{key}_in_url"  # what this session last put into the URL (None: nothing, the default)
    if key not in st.session_state or (
        param.value is not None and param.value != st.session_state.get(in_url)
    ):
        # A new session, or a link that named another language: the URL decides.
        st.session_state[key] = param.value or fallback
    chosen = st.selectbox("Reader's language", list(languages), format_func=lambda code: NAMES[code], key=key)
    language = chosen if chosen in languages else languages[0]
    # The default needs no parameter: a link without one opens in it.
    kept = None if language == fallback else language
    st.session_state[in_url] = kept
    if kept is None:
        st.query_params.pop(url_state.LANGUAGE, None)
    elif st.query_params.get(url_state.LANGUAGE) != kept:
        st.query_params[url_state.LANGUAGE] = kept
    return language
