"""What is wrong with a conversation, above its transcript: stuck, rows that cannot be read, its error as an
administrator and as an editor would read it (001_…, "A failure carries its kind")."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.formatting import duration
from core.health import StuckConversation
from dashboard.queries.common import when
from dashboard.queries.conversations import ErrorViews


def show(
    stuck: StuckConversation | None, problems: Sequence[str], errors: ErrorViews | None, *, key: str
) -> None:
    """A warning when stuck, a line per unreadable row, and the error side by side per reader."""
    if stuck is not None:
        st.error(
            f"This conversation is stuck: {stuck.status} since {when(stuck.since)} UTC "
            f"({duration(stuck.stuck_for_s)}). ai-chat:cleanup has not run; until it does, the editor "
            "cannot go on.",
            icon=":material/warning:",
        )
    for problem in problems:
        st.warning(f"Cannot be read: {problem}")
    if errors is None:
        return
    st.header("The error")
    administrator, editor = st.columns(2)
    administrator.markdown("**As an administrator sees it**")
    administrator.error(errors.administrator.text)
    if errors.administrator.module is not None:
        module = errors.administrator.module
        administrator.caption(f"Fix it in {module.label} ({module.identifier})")
    editor.markdown("**As an editor sees it**")
    editor.error(errors.editor.text)
    st.caption(f"error_code: {errors.code or '(none)'}")
