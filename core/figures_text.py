"""How a figure reads in a line of text: a share, a difference in points, a p-value."""

from __future__ import annotations


def percent(value: float | None) -> str:
    """A share as "12.3%", or "–" when there is none."""
    return "–" if value is None else f"{value * 100:.1f}%"


def points(value: float) -> str:
    """A difference of shares in signed percentage points, with a true minus sign: "+4.2", "−1.0"."""
    return f"{value * 100:+.1f}".replace("-", "−")


def p_text(value: float) -> str:
    """The p-value as it reads in a line: "p = 0.0123", or "p < 0.0001"."""
    return "p < 0.0001" if value < 0.0001 else f"p = {value:.4f}"
