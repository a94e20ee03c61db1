"""The Run page's row labels (core.row_parts): read from the stored decided_by and core.window's spans."""

from __future__ import annotations

import pytest

from core.outcomes import SAME_SAVE_S, Action, HistoryRow
from core.row_parts import RowPart, row_part, row_parts
from core.time import DAY_S

WINDOW = 7 * DAY_S
T = 1_790_000_000
CLOSES = T + WINDOW


def _row(uid: int, tstamp: int, action: Action = Action.MODIFY) -> HistoryRow:
    return HistoryRow(uid=uid, tstamp=tstamp, actiontype=action.value, fields=frozenset({"title"}))


@pytest.mark.parametrize(
    ("uid", "tstamp", "decided_by", "part"),
    [
        (10, T, (10, 12), RowPart.EVIDENCE),
        (12, T + DAY_S, (10, 12), RowPart.DECIDED),
        (9, T - DAY_S, (10, 12), RowPart.BEFORE),
        (11, T + DAY_S, (10, 12), RowPart.IN_WINDOW),
        (13, CLOSES, (10, 12), RowPart.IN_WINDOW),
        (14, CLOSES + 1, (10, 12), RowPart.AFTER_WINDOW),
        (11, T + DAY_S, (), RowPart.IN_WINDOW),
        (11, T + DAY_S, None, RowPart.NOT_RECORDED),
        (14, CLOSES + 1, None, RowPart.AFTER_WINDOW),
    ],
)
def test_a_rows_part_is_read_from_the_stored_decided_by_and_the_windows_end(
    uid: int, tstamp: int, decided_by: tuple[int, ...] | None, part: RowPart
) -> None:
    found = row_part(uid, tstamp, decided_by, CLOSES, decided_by[0] if decided_by else None)

    assert found is part


def test_the_rows_shown_run_from_the_evidence_row_to_the_windows_end_and_the_deletes_after_it() -> None:
    rows = [
        _row(8, T - DAY_S),
        _row(10, T - 60),
        _row(11, T + DAY_S),
        _row(12, CLOSES + 1),
        _row(13, CLOSES + 2, Action.DELETE),
    ]

    shown = row_parts(rows, T, WINDOW, (10, 11))

    assert [(row.uid, part) for row, part in shown] == [
        (10, RowPart.EVIDENCE),
        (11, RowPart.DECIDED),
        (13, RowPart.AFTER_WINDOW),
    ]


def test_without_a_stored_evidence_row_the_rows_shown_start_at_the_writes_same_save() -> None:
    rows = [_row(8, T - SAME_SAVE_S - 1), _row(9, T - SAME_SAVE_S), _row(10, T + DAY_S)]

    shown = row_parts(rows, T, WINDOW, None)

    assert [(row.uid, part) for row, part in shown] == [(9, RowPart.NOT_RECORDED), (10, RowPart.NOT_RECORDED)]


def test_a_gone_records_delete_stored_first_is_a_deciding_row_not_evidence_when_no_row_came_before() -> None:
    # DESIGN.md rule 2: a gone record is DISCARDED without evidence; where no row was inserted before the
    # write, its decided_by lists the deletes alone.
    rows = [_row(12, T + DAY_S, Action.DELETE)]

    shown = row_parts(rows, T, WINDOW, (12,))

    assert [(row.uid, part) for row, part in shown] == [(12, RowPart.DECIDED)]
