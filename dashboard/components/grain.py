"""The grain of the rates: week or day, as measure-rates wrote them."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def show(grains: Sequence[str], *, key: str) -> str:
    """The chosen grain; the first of `grains` (week, when measured) unless another was chosen."""
    return str(st.segmented_control("Grain", list(grains), default=grains[0], key=key) or grains[0])
