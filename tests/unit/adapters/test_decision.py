"""adapters.decision compiles core.window's spans: the SQL holds the rows core.window.in_span holds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import case, create_engine, literal, select

from adapters.decision import SpanColumns
from adapters.decision import in_span as compiled_span
from core.time import DAY_S
from core.window import DELETES, DELETES_AFTER_WINDOW, HUMAN_ROWS, Span, in_span

WINDOW = 7 * DAY_S
T = 1_790_000_000
OWN_ROW = 100
CLOSES = T + WINDOW


@pytest.mark.parametrize("span", [HUMAN_ROWS, DELETES, DELETES_AFTER_WINDOW])
@given(uid=st.integers(0, 300), tstamp=st.integers(T - 2 * WINDOW, T + 3 * WINDOW))
def test_the_compiled_span_holds_the_rows_core_holds(span: Span, uid: int, tstamp: int) -> None:
    columns = SpanColumns(
        uid=literal(uid), tstamp=literal(tstamp), own_row=literal(OWN_ROW), closes=literal(CLOSES)
    )

    with create_engine("sqlite://").connect() as connection:
        held = connection.execute(select(case((compiled_span(span, columns), 1), else_=0))).scalar_one()

    assert bool(held) is in_span(span, uid=uid, tstamp=tstamp, own_row=OWN_ROW, closes=CLOSES)
