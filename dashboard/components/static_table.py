"""A table whose every cell is read whole: st.table wraps a long text where st.dataframe's grid cuts it at
the column's width. st.table reads each cell as Markdown; the cells here are data, so every character Markdown
or Streamlit's own directives (`:red[…]`, `:material/…:`, `$…$`) could read as markup is escaped."""

from __future__ import annotations

import re
from numbers import Integral
from typing import Any

import pandas as pd
import streamlit as st

from core.formatting import count

# CommonMark lets a backslash escape any ASCII punctuation character, and then shows it as it is.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def plain(text: str) -> str:
    """`text` as Markdown that shows exactly `text`, on one line."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def _cell(value: Any) -> Any:
    if isinstance(value, Integral) and not isinstance(value, bool):
        return plain(count(int(value)))  # a count as the page's other figures show it: "2,534"
    return plain(value) if isinstance(value, str) else value


def show(frame: pd.DataFrame) -> None:
    """The frame as a static table without its index, every text cell escaped, long texts wrapped."""
    shown = frame.rename(columns=plain).map(_cell) if not frame.empty else frame
    st.table(shown, hide_index=True)
