"""What a page put on the screen, as text: every element's text, every table's cells and column names, and
every chart's figure, so that a test can search all of it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Dataframe, Table

# dashboard.components.static_table escapes every punctuation character of a cell: the text it shows is the
# cell without those backslashes.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _nodes(child)


def _shown(text: str) -> str:
    return _ESCAPED.sub(r"\1", text)


def _frame(node: Dataframe | Table) -> pd.DataFrame:
    """The table's cells and column names as the page shows them."""
    if isinstance(node, Dataframe):
        return node.value
    frame = node.value
    return frame.rename(columns=_shown).map(lambda cell: _shown(cell) if isinstance(cell, str) else cell)


def tables(app: AppTest) -> list[Any]:
    """Every table the page shows (st.dataframe and st.table), as pandas DataFrames, in page order."""
    return [_frame(node) for node in _nodes(app._tree) if isinstance(node, Dataframe | Table)]


def column_widths(app: AppTest) -> list[dict[str, Any]]:
    """Each st.dataframe's configured column widths by column name, in page order (a column left to fit its
    cells has none)."""
    return [
        {
            name: config["width"]
            for name, config in json.loads(node.proto.columns or "{}").items()
            if "width" in config
        }
        for node in _nodes(app._tree)
        if isinstance(node, Dataframe)
    ]


def figures(app: AppTest) -> list[dict[str, Any]]:
    """Every plotly figure the page shows, as its JSON."""
    return [json.loads(node.proto.spec) for node in app.get("plotly_chart")]


def text(app: AppTest) -> str:
    """Everything the page shows, as one text: element protos, table cells and column names, figures."""
    parts: list[str] = []
    for node in _nodes(app._tree):
        if isinstance(node, Dataframe | Table):
            frame = _frame(node)
            parts.append(" ".join(str(name) for name in frame.columns))
            parts.append(frame.to_csv())
            continue
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
    return "\n".join(parts)


def values(array: Any) -> list[Any]:
    """A figure's data array as a list: plotly writes numeric arrays as base64 ({"dtype", "bdata"})."""
    if isinstance(array, dict) and "bdata" in array:
        import base64

        import numpy as np

        decoded = np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
        return [None if isinstance(v, float) and v != v else v for v in decoded.tolist()]
    return list(array)
