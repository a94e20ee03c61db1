"""A card outcome as one line in the reader's language: the card, the answer the editor gave, what it meant.

The chat's cards are answered with German labels (core.cards); a reader who chose English reads what each
label says in English, so that a line never mixes the two languages. An answer this table does not know is
shown as stored: it is the editor's own choice, not a word of ours.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.cards import APPROVE_ANSWER, CardDecision, CardOutcome
from core.error_codes import Language

ANSWER_LABELS: Mapping[str, Mapping[Language, str]] = {
    APPROVE_ANSWER: {"de": "Übernehmen", "en": "Apply"},
    "Behalten": {"de": "Behalten", "en": "Keep"},
    "Überspringen": {"de": "Überspringen", "en": "Skip"},
    "Andere Variante": {"de": "Andere Variante", "en": "Another variant"},
    "abgelehnt": {"de": "abgelehnt", "en": "declined"},
}

DECISION_LABELS: Mapping[CardDecision, Mapping[Language, str]] = {
    CardDecision.APPROVED: {"de": "übernommen", "en": "approved"},
    CardDecision.DECLINED: {"de": "abgelehnt", "en": "declined"},
}

# The words around the card's tool, record and fields.
CARD_WORDS: Mapping[Language, Mapping[str, str]] = {
    "de": {"card": "Karte", "on": "für", "fields": "Felder"},
    "en": {"card": "Card", "on": "on", "fields": "fields"},
}


def card_line(outcome: CardOutcome, language: Language) -> str:
    """'Card update_page_seo on pages:1 (fields seo_title): Apply — approved', all in one language."""
    words = CARD_WORDS[language]
    line = f"{words['card']} {outcome.tool}"
    if outcome.record:
        line += f" {words['on']} {outcome.record}"
    if outcome.fields:
        line += f" ({words['fields']} {', '.join(outcome.fields)})"
    labels = ANSWER_LABELS.get(outcome.answer)
    answer = labels[language] if labels is not None else outcome.answer
    decided = DECISION_LABELS[outcome.decision][language]
    return f"{line}: {answer} — {decided}" if answer else f"{line}: {decided}"
