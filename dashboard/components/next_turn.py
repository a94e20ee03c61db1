"""What the model is given next turn: the transcript with the notes placed and the budget applied, and beside
each earlier answer the notes its own turn was given."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from core.record_rebuild import NotesReport, TurnNotes
from dashboard.components import transcript
from dashboard.queries import conversations


def show(report: NotesReport, turns: Mapping[int, TurnNotes], *, key: str) -> None:
    """The notes' count and size, what the budget dropped, the writes they name, then the transcript; or
    that the conversation gets no notes, and why."""
    notes = report.notes
    if notes.no_notes_reason is not None:
        st.info(notes.no_notes_reason)
        st.caption(f"Page line: {report.page_line}")
        transcript.show(conversations.model_transcript(report, turns), key=key)
        return
    written = conversations.written_in_notes(report)
    st.markdown(
        f"**{len(notes.notes)} notes** placed, {sum(len(n.text) for n in notes.notes):,} characters; the "
        f"budget dropped **{notes.dropped_count} notes** ({notes.dropped_chars:,} characters)."
    )
    st.markdown(f"**{len(written)} written records** in the notes: " + (", ".join(written) or "none"))
    st.caption(f"Page line: {report.page_line}")
    transcript.show(conversations.model_transcript(report, turns), key=key)
