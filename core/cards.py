"""Card outcomes: what the editor answered on an approval card (tx_nrmcpagent_conversation.card_outcomes)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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
