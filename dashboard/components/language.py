"""The reader's language for notices and errors: German (the chat's default reader) or English."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.error_codes import Language

NAMES = {"de": "Deutsch", "en": "English"}


def show(languages: Sequence[Language], default: str, *, key: str) -> Language:
    """The chosen language; `default` (RUNRECORD_READER_LANGUAGE) first, German when it is neither."""
    start = list(languages).index(default) if default in languages else 0
    chosen = st.selectbox(
        "Reader's language", list(languages), index=start, format_func=lambda code: NAMES[code], key=key
    )
    return chosen if chosen in languages else languages[0]
