"""The part each history row of a written record played in W's stored outcome, as the Run page names it.

Read from what the derivation stored (tx_runrecord_write_outcome.decided_by: the evidence row first, then the
rows that decided) and from the window's spans (core.window), never derived again: the page shows the rows
the derivation named, not a reading of its own of DESIGN.md rules 3 and 4.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from core.outcomes import SAME_SAVE_S, Action, HistoryRow
from core.window import DELETES, HUMAN_ROWS, stamped_in, window_closes_at


class RowPart(StrEnum):
    """What a history row of the written record was to W's stored outcome, read from its decided_by alone."""

    EVIDENCE = "evidence: the write's own row, or the last row inserted before it"
    DECIDED = "decided the outcome"
    BEFORE = "inserted before the write"
    IN_WINDOW = "in the window, did not decide it (an AI write, a draft, automation, or no modification)"
    AFTER_WINDOW = "after the window"
    NOT_RECORDED = "in the window or around it (which rows decided is not recorded)"


def _in_window(tstamp: int, closes: int) -> bool:
    return stamped_in(HUMAN_ROWS.stamped, tstamp, closes)


def stored_evidence(
    decided_by: Sequence[int] | None, rows: Sequence[HistoryRow], written_at: int
) -> int | None:
    """The evidence row among the stored decided_by: its first uid, unless W had none. A record that is gone
    is DISCARDED by its deletes alone where no row was inserted before W (DESIGN.md rule 2; otherwise the
    last row inserted by W's moment heads them), and an evidence row is inserted by W's moment,
    so stamped at or before it (give or take SAME_SAVE_S): a first row stamped later decided the outcome."""
    if not decided_by:
        return None
    first = next((row for row in rows if row.uid == decided_by[0]), None)
    if first is not None and first.tstamp > written_at + SAME_SAVE_S:
        return None
    return decided_by[0]


def row_part(
    uid: int, tstamp: int, decided_by: Sequence[int] | None, closes: int, evidence: int | None
) -> RowPart:
    """The part a row played, from the outcome's stored decided_by (the evidence row `evidence`, then the
    deciding rows) and the row's place in insertion order; never a derivation again (DESIGN.md rules 3, 4)."""
    if decided_by is None:
        return RowPart.NOT_RECORDED if _in_window(tstamp, closes) else RowPart.AFTER_WINDOW
    if uid == evidence:
        return RowPart.EVIDENCE
    if uid in decided_by:
        return RowPart.DECIDED
    if evidence is not None and uid < evidence:
        return RowPart.BEFORE
    return RowPart.IN_WINDOW if _in_window(tstamp, closes) else RowPart.AFTER_WINDOW


def _around(row: HistoryRow, written_at: int, closes: int, evidence: int | None) -> bool:
    if not _in_window(row.tstamp, closes):
        # DELETES reaches past the window: a delete stamped after it still tells a gone record's story.
        return row.action is Action.DELETE and stamped_in(DELETES.stamped, row.tstamp, closes)
    if evidence is not None:
        return row.uid >= evidence
    return row.tstamp >= written_at - SAME_SAVE_S


def row_parts(
    rows: Sequence[HistoryRow], written_at: int, window_s: int, decided_by: Sequence[int] | None
) -> list[tuple[HistoryRow, RowPart]]:
    """The rows shown around W, in insertion order, each with its part: the stored deciding rows, the rows
    from the stored evidence row on (without one, those stamped from the write's same save on) up to the
    window's end, and the deletes after it."""
    closes = window_closes_at(written_at, window_s)
    decided = set(decided_by or ())
    evidence = stored_evidence(decided_by, rows, written_at)
    ordered = sorted(rows, key=lambda row: row.uid)
    shown = [row for row in ordered if row.uid in decided or _around(row, written_at, closes, evidence)]
    return [(row, row_part(row.uid, row.tstamp, decided_by, closes, evidence)) for row in shown]
