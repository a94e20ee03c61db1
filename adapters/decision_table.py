"""A decision table of core compiled into one SQL CASE: rows of a test and what it gives, in order, the first
test that holds deciding (core.answers.VERDICT_BY_COUNTS, VERDICT_BY_RECORD, DENIAL_DECISION, core.waits'
GO_ON_DECISION). Each adapter states its tests once over its columns; the order and the results come from
core, so a row changed there changes the SQL with it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, case, literal, null

_Test = TypeVar("_Test")
_Result = TypeVar("_Result")

# An arm of the CASE; a caller may put some before the table's own (a case the table is not asked in).
Arm = tuple[ColumnElement[bool], Any]


def first_holding(
    rows: Iterable[tuple[_Test, _Result | None]],
    holds: Callable[[_Test], ColumnElement[bool] | None],
    value: Callable[[_Result], Any],
    *,
    first: Sequence[Arm] = (),
) -> ColumnElement[Any]:
    """The CASE of the rows in their order: WHEN the test holds THEN its result. A test that always holds
    (`holds` gives None, core's OTHERWISE) is the ELSE and ends the table; without one, no test holding gives
    NULL, as does a result that is None (core's "not settled here")."""
    arms: list[Arm] = list(first)
    otherwise: Any = None
    for test, result in rows:
        condition = holds(test)
        if condition is None:
            otherwise = None if result is None else literal(value(result))
            break
        arms.append((condition, None if result is None else literal(value(result))))
    if not arms:  # the first test always holds: no CASE without a WHEN
        return null() if otherwise is None else otherwise
    return case(*arms, else_=otherwise)
