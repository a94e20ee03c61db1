"""A card outcome reads in one language: the card's words, the answer's label and the decision."""

from __future__ import annotations

import pytest

from core.card_text import card_line
from core.cards import CardDecision, CardOutcome


def _card(answer: str, decision: CardDecision) -> CardOutcome:
    return CardOutcome(2, "run", "update_page_seo", "pages:1", ("seo_title",), decision, answer, 0)


@pytest.mark.parametrize(
    ("answer", "decision", "language", "line"),
    [
        (
            "Übernehmen",
            CardDecision.APPROVED,
            "de",
            "Karte update_page_seo für pages:1 (Felder seo_title): Übernehmen — übernommen",
        ),
        (
            "Übernehmen",
            CardDecision.APPROVED,
            "en",
            "Card update_page_seo on pages:1 (fields seo_title): Apply — approved",
        ),
        (
            "Behalten",
            CardDecision.DECLINED,
            "en",
            "Card update_page_seo on pages:1 (fields seo_title): Keep — declined",
        ),
        (
            "Andere Variante",
            CardDecision.DECLINED,
            "en",
            "Card update_page_seo on pages:1 (fields seo_title): Another variant — declined",
        ),
        (
            "Überspringen",
            CardDecision.DECLINED,
            "de",
            "Karte update_page_seo für pages:1 (Felder seo_title): Überspringen — abgelehnt",
        ),
    ],
)
def test_a_card_outcome_reads_in_the_reader_s_language_only(
    answer: str, decision: CardDecision, language: str, line: str
) -> None:
    assert card_line(_card(answer, decision), language) == line  # type: ignore[arg-type]


def test_an_answer_the_table_does_not_know_is_shown_as_stored() -> None:
    assert card_line(_card("Später", CardDecision.DECLINED), "en").endswith(": Später — declined")
