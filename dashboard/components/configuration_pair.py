"""Two configurations to compare: the first, and the one set against it."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def show(
    configurations: Sequence[str], suggested: tuple[str, str] | None, *, key: str
) -> tuple[str, str] | None:
    """The chosen pair (first, second), the suggested one by default; None when fewer than two exist or the
    same configuration is chosen twice (said on the page)."""
    if len(configurations) < 2:
        return None
    options = list(configurations)
    first_default, second_default = suggested or (options[0], options[1])
    left, right = st.columns(2)
    first = left.selectbox("Configuration", options, index=options.index(first_default), key=f"{key}_first")
    second = right.selectbox("Against it", options, index=options.index(second_default), key=f"{key}_second")
    if first is None or second is None or first == second:
        st.info("Choose two different configurations.")
        return None
    return str(first), str(second)
