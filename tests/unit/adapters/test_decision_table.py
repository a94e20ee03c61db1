"""adapters.decision_table compiles core's decision tables: the SQL gives what core's Python gives, row by row
(core.answers.VERDICT_BY_COUNTS, DENIAL_DECISION; VERDICT_BY_RECORD and core.waits.GO_ON_DECISION,
compiled over the batch's scratch tables, are held by tests/db/test_measure_differential.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Integer, create_engine, literal, null, select, true

from adapters.decision_table import first_holding
from adapters.measure_batch.facts import denial_of
from adapters.measure_batch.verdicts import count_test
from core.answers import VERDICT_BY_COUNTS, Answer, StoredMessage, denial_state, verdict_from_counts
from core.claims import denies_change
from core.measured_runs import EventCounts
from core.transcript import Role, TranscriptMessage

DENYING = "Hier wurde nichts geprüft oder geändert."
PLAIN = "Der Titel ist gespeichert."
T = 1_780_000_000


def _value(expression: object) -> object:
    with create_engine("sqlite://").connect() as connection:
        return connection.execute(select(expression)).scalar_one()


@given(
    events=st.integers(0, 3),
    doubtful=st.integers(0, 2),
    tool_writes=st.integers(0, 2),
    approvals=st.integers(0, 2),
)
def test_the_compiled_count_verdict_is_the_one_core_gives(
    events: int, doubtful: int, tool_writes: int, approvals: int
) -> None:
    # The batch's counts hold the first tool_write's time and the first approval's uid, NULL for none.
    columns = SimpleNamespace(
        events=literal(events),
        doubtful=literal(doubtful),
        first_write_at=literal(T) if tool_writes else null(),
        first_approval=literal(7) if approvals else null(),
    )
    counts = EventCounts(events=events, tool_writes=tool_writes, approvals=approvals)

    found = _value(
        first_holding(VERDICT_BY_COUNTS, lambda test: count_test(test, columns), lambda v: v.value)
    )

    expected = verdict_from_counts(counts, doubtful)
    assert found == (None if expected is None else expected.value)


def _answer(text: str) -> Answer:
    message = TranscriptMessage(position=2, role=Role.ASSISTANT, content=text, run_uuid="run", segment=0)
    stored = StoredMessage(uid=1, sorting=2, role="assistant", crdate=0, read=message)
    return Answer(stored, message, None, claims=False)


@pytest.mark.parametrize("earlier", [None, False, True])
@pytest.mark.parametrize("denies", [False, True])
def test_the_compiled_denial_is_the_one_core_gives(earlier: bool | None, denies: bool) -> None:
    text = DENYING if denies else PLAIN
    assert denies_change(text) is denies
    earlier_column = null() if earlier is None else literal(int(earlier), Integer)

    found = _value(denial_of(true(), earlier_column, literal(int(denies), Integer)))

    assert found == denial_state(_answer(text), earlier).value


def test_without_an_answer_the_compiled_denial_is_none() -> None:
    found = _value(denial_of(~true(), literal(1, Integer), literal(1, Integer)))

    assert found == ""


def test_a_test_that_always_holds_ends_the_table_and_a_result_of_none_is_null() -> None:
    rows = [("never", "a"), ("unsettled", None), ("always", "b"), ("after", "c")]
    conditions = {"never": literal(False), "unsettled": literal(True), "always": None, "after": literal(True)}

    settled = _value(first_holding(rows[2:], conditions.get, str))
    unsettled = _value(first_holding(rows, conditions.get, str))
    nothing_holds = _value(first_holding(rows[:1], conditions.get, str))

    assert (settled, unsettled, nothing_holds) == ("b", None, None)
