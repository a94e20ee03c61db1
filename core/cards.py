"""Card outcomes: what the editor answered on an approval card (tx_nrmcpagent_conversation.card_outcomes)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core import json_text


class CardDecision(StrEnum):
    APPROVED = "approved"
    DECLINED = "declined"


# The answers a card offers. Approving is shown as "Übernehmen"; "Behalten" keeps the current value and so
# declines the proposal: 000_…'s refused-call table lists it among a declined card's answers ("the answer
# (Behalten, Überspringen, Andere Variante, or 'abgelehnt')"). A plain denial reads "abgelehnt".
APPROVE_ANSWER = "Übernehmen"
DECLINE_ANSWERS = ("Behalten", "Überspringen", "Andere Variante", "abgelehnt")


@dataclass(frozen=True)
class CardOutcome:
    position: int  # transcript position of the answer the card belongs to
    run_uuid: str
    tool: str
    record: str  # "table:uid", "" when the card named none
    fields: tuple[str, ...]
    decision: CardDecision
    answer: str
    at: int

    def to_json(self) -> dict[str, Any]:
        """The card outcome in the stored column's shape (DESIGN.md)."""
        return {
            "position": self.position,
            "runUuid": self.run_uuid,
            "tool": self.tool,
            "record": self.record,
            "fields": list(self.fields),
            "decision": self.decision.value,
            "answer": self.answer,
            "at": self.at,
        }


@dataclass(frozen=True)
class UnreadableCardOutcome:
    reason: str
    index: int | None = None  # its place in the stored list; None: the column as a whole


def parse_card_outcomes(
    text: str | None,
) -> tuple[tuple[CardOutcome, ...], tuple[UnreadableCardOutcome, ...]]:
    """The stored card_outcomes column; what cannot be read is reported, the rest still read."""
    if text is None or not text.strip():
        return (), ()
    try:
        value = json_text.loads(text)
    except json.JSONDecodeError as error:
        return (), (UnreadableCardOutcome(f"not JSON ({error.msg} at character {error.pos})"),)
    except ValueError:  # bytes that are no UTF-8 text
        return (), (UnreadableCardOutcome("not JSON (no UTF-8 text)"),)
    except RecursionError:
        return (), (UnreadableCardOutcome("not JSON (nested deeper than it can be read)"),)
    if not isinstance(value, list):
        return (), (UnreadableCardOutcome("not a list"),)
    outcomes: list[CardOutcome] = []
    problems: list[UnreadableCardOutcome] = []
    for index, item in enumerate(value):
        outcome = _card_outcome(item)
        if isinstance(outcome, str):
            problems.append(UnreadableCardOutcome(outcome, index))
        else:
            outcomes.append(outcome)
    return tuple(outcomes), tuple(problems)


def _card_outcome(item: object) -> CardOutcome | str:
    if not isinstance(item, dict):
        return "not an object"
    decision = item.get("decision")
    if decision not in {member.value for member in CardDecision}:
        return "decision is not approved or declined"
    position, at = item.get("position"), item.get("at", 0)
    if not isinstance(position, int) or isinstance(position, bool) or not isinstance(at, int):
        return "position or at is not a number"
    fields = item.get("fields", [])
    if not isinstance(fields, list) or not all(isinstance(name, str) for name in fields):
        return "fields is not a list of names"
    texts = [item.get(key, "") for key in ("runUuid", "tool", "record", "answer")]
    if not all(isinstance(value, str) for value in texts):
        return "runUuid, tool, record or answer is not text"
    run_uuid, tool, record, answer = (str(value) for value in texts)
    return CardOutcome(position, run_uuid, tool, record, tuple(fields), CardDecision(decision), answer, at)
