"""A choice of metric, shown by its label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st


def show(label: str, metrics: Sequence[str], labels: Mapping[str, str], *, key: str) -> str:
    """The chosen metric name; the first by default."""
    chosen = st.selectbox(label, list(metrics), format_func=lambda name: labels.get(name, name), key=key)
    return str(chosen or metrics[0])
