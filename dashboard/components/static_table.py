"""A table whose every cell is read whole: st.table wraps a long text where st.dataframe's grid cuts it at
the column's width. st.table reads each cell as Markdown; the cells here are data, so every character Markdown
or Streamlit's own directives (`:red[…]`, `:material/…:`, `$…$`) could read as markup is escaped."""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from numbers import Real
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
    return plain(value) if isinstance(value, str) else value


def _count(value: Any) -> Any:
    """A count as the page's other figures show it: "2,534"; none (a run still going) as an empty cell. A
    column of counts with a gap in it comes as floats."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return _cell(value)
    number = float(value)
    if math.isnan(number):
        return ""
    return plain(count(int(number))) if number.is_integer() else value


def show(frame: pd.DataFrame, *, counts: Collection[str] = ()) -> None:
    """The frame as a static table without its index, every text cell escaped, long texts wrapped; the
    columns named in `counts` with thousands separators (an id, such as a uid, is shown as it is)."""
    shown = frame.copy()
    for column in shown.columns:
        shown[column] = shown[column].map(_count if column in counts else _cell)
    st.table(shown.rename(columns=plain), hide_index=True)
