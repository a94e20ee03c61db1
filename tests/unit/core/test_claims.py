"""Claim words, denials and "go on" phrases (001_…, "Decision" and "Consequences"; 000_…, "Context")."""

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.claims import (
    CLAIM_WORDS,
    CLAIM_WORDS_DE,
    CLAIM_WORDS_EN,
    DENIAL_WORDS,
    GO_ON_PHRASES,
    NEGATIONS,
    _normalise_message,
    claims_change,
    denies_change,
    is_go_on,
)

CLAIMS = [
    # German
    ("Erledigt!", True),
    ("Erledigt! Ich habe die Seite aktualisiert.", True),
    ("**Erledigt** – der Titel ist gespeichert.", True),
    ("Ich habe das Inhaltselement tt_content:512 auf Seite pages:10073 geändert.", True),
    ("- Seitentitel: angepasst\n- Beschreibung: ergänzt", True),
    ("Die neue Seite wurde angelegt (uid 10073).", True),
    ("GESPEICHERT", True),
    ("Die Straße wurde geändert.", True),
    ("Ich habe nichts gespeichert.", False),
    ("Es wurde nicht gespeichert.", False),
    ("Keine Seite wurde gelöscht.", False),
    ("Das habe ich nie geändert.", False),
    ("Weder geändert noch gespeichert.", False),
    ("Soll der Titel so gesetzt werden?", True),  # generous: talk about a change is a match (001_…)
    ("Hier ist mein Vorschlag für den Seitentitel.", False),
    ("Die gespeicherten Daten sehen gut aus.", False),  # inflected forms are not claims
    # English
    ("Done!", True),
    ("Done. I updated the page title.", True),
    ("I've created the page and added two content elements.", True),
    ("`pages:10073` saved", True),
    ("Nothing was saved.", False),
    ("I have not changed anything.", False),
    ("The page wasn't updated.", False),
    ("I didn\u2019t change it.", False),
    ("No content elements were deleted.", True),  # "no" four words before: outside the window
    ("Shall I set the title to 'Welcome'?", False),  # "set" is not a claim word
    ("The title stays unchanged.", False),
    ("Here is a draft for the page title.", False),
]

# 001_…, "Decision": "not preceded by a negation such as 'nicht', 'nichts', 'kein' or 'not' within three
# words": one, two or three words before stops the claim, four words before does not.
NEGATION_WINDOW = [
    ("nicht gespeichert", False),  # negation one word before
    ("nicht den Titel gespeichert", False),  # three words before
    ("nicht den neuen Titel gespeichert", True),  # four words before
    ("not saved", False),
    ("not the title saved", False),
    ("not the new title saved", True),
    ("Es wurde nichts gespeichert.", False),
    ("Der Titel ist nicht mehr gespeichert.", False),
    ("Kein Titel wurde gespeichert.", False),
    ("Kein neuer Titel wurde gespeichert.", True),
    ("Nicht alle sechs Felder wurden gespeichert.", True),
    ("The page was not updated.", False),
    ("No page was updated.", False),
    ("No new page was updated.", True),
    ("Nothing there was updated.", False),
    ("Nothing on it was updated.", True),
]

# A negation is not carried along a list: each claim word looks at its own three words before.
LISTS = [
    ("Ich habe nichts geprüft, gespeichert oder geändert.", True),
    ("Es wurde nichts gespeichert, geändert oder gelöscht.", True),
    ("Nothing has been checked or changed.", True),  # the denial of 000_…, "Context"
    ("Nothing was saved, changed or deleted.", True),
    ("Nichts gespeichert oder geändert.", False),  # "nichts" is the third word before "geändert"
]

# No word ends a negation's reach early: not a contrast word, not a sentence end, not a line break.
NOTHING_ENDS_A_NEGATION = [
    ("Die Seite ist nicht gelöscht, sondern aktualisiert.", False),
    ("Nicht gelöscht, sondern aktualisiert.", False),
    ("Not deleted but updated.", False),
    ("No problem. Saved!", False),
    ("Keine Sorge: gespeichert.", False),
    ("Kein Problem!\nGespeichert.", False),
    ("Nichts zu tun?\nErledigt.", False),
    ("Nothing to do here. Done.", True),  # "nothing" is the fourth word before "done"
]

LINE_BREAKS = [
    ("nicht\ngespeichert", False),
    ("Not\r\nsaved", False),
    ("- Titel: nicht\n- Beschreibung: gespeichert", False),
    ("Nothing\n\n## Saved", False),
    ("Keine Änderung am Titel.\n\nBeschreibung gespeichert.", True),
    ("Nothing\non\nthe\npage\nupdated", True),
]

# Punctuation and Markdown marks are no words: they neither fill the window nor end it.
PUNCTUATION = [
    ("Nicht – **wie besprochen** – gespeichert.", False),
    ("Nicht – **wie gestern besprochen** – gespeichert.", True),
    ("not (as discussed) saved", False),
    ("not (as discussed before) saved", True),
    ("Not - - - - saved", False),
    ("`nicht` … _gespeichert_", False),
    ("> **Kein** Titel wurde `gespeichert`", False),
]

MIXED = [
    ("Den Titel habe ich nicht geändert, die Beschreibung aber aktualisiert.", True),
    ("I did not change the title, but I updated the description.", True),
    ("Ich habe nichts gelöscht, aber die Beschreibung aktualisiert.", True),
    ("Nicht gelöscht und nicht aktualisiert.", False),
]


@pytest.mark.parametrize(("text", "claims"), CLAIMS)
def test_a_claim_word_not_negated_within_three_words_claims_a_change(text: str, claims: bool) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize("participle", ["erledigt", "gespeichert", "created", "updated"])
def test_the_seeds_participles_claim_a_change(participle: str) -> None:
    text = f"Die Seite: {participle}."

    result = claims_change(text)

    assert result is True


@pytest.mark.parametrize("negation", ["nicht", "nichts", "kein", "not"])
@pytest.mark.parametrize("participle", ["erledigt", "gespeichert", "created", "updated"])
@pytest.mark.parametrize(("words_between", "claims"), [(0, False), (1, False), (2, False), (3, True)])
def test_a_seed_negation_stops_a_seed_participle_up_to_three_words_before_it(
    negation: str, participle: str, words_between: int, claims: bool
) -> None:
    text = " ".join([negation, *["Seite"] * words_between, participle])

    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(("text", "claims"), NEGATION_WINDOW)
def test_a_negation_three_words_before_stops_a_claim_and_four_words_before_does_not(
    text: str, claims: bool
) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(("text", "claims"), LISTS)
def test_a_negation_is_not_carried_along_a_list(text: str, claims: bool) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(("text", "claims"), NOTHING_ENDS_A_NEGATION)
def test_no_contrast_word_or_sentence_end_ends_a_negation_early(text: str, claims: bool) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(("text", "claims"), LINE_BREAKS)
def test_a_line_break_is_whitespace_like_any_other(text: str, claims: bool) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(("text", "claims"), PUNCTUATION)
def test_punctuation_and_markdown_marks_are_no_words(text: str, claims: bool) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(("text", "claims"), MIXED)
def test_one_claim_word_not_negated_is_enough(text: str, claims: bool) -> None:
    result = claims_change(text)

    assert result is claims


@pytest.mark.parametrize(
    "text",
    [
        "nichts gespeichert",
        "nichts geändert",
        "nicht gespeichert",
        "Es wurden keine Änderungen vorgenommen.",
        "Nothing was changed.",
        "Nothing was saved.",
        "No changes were made.",
        "Die Aktion wurde nicht durchgeführt.",
        "Die Tour hat nicht stattgefunden.",
        "The tour had not taken place.",
        "The tour did not take place.",
        "Es ist nichts passiert.",
        "Nothing happened.",
        "I haven't saved anything.",
        "Es wurde nichts geprüft oder geändert, die Tour hat nicht stattgefunden.",
        "Nothing has been checked or changed.",
        "Der SEO-Titel wurde nicht gespeichert.",
        "Ich habe, wie gewünscht, nichts geändert.",
    ],
)
def test_a_negated_change_or_event_word_denies_a_change(text: str) -> None:
    result = denies_change(text)

    assert result is True


@pytest.mark.parametrize(
    "text",
    [
        "Erledigt! Der Titel ist gespeichert.",
        "Done. I updated the page title.",
        "Hier ist mein Vorschlag für den Seitentitel.",
        "The tour took place yesterday.",
        "No problem, I updated the title.",
        "Kein Problem – erledigt.",
        "Keine Sorge - ich habe den Titel gespeichert.",
        "",
    ],
)
def test_an_answer_without_a_negated_change_word_denies_nothing(text: str) -> None:
    result = denies_change(text)

    assert result is False


# The three words around a contrast word, with what each rule gives. claims_change (001_…, "Decision"): a
# claim word "not preceded by a negation … within three words", a contrast word in between or not.
# denies_change (000_…, "Context"): a contrast word nearer than the negation ends the negation's reach.
CONTRAST_CASES = [
    # negation third, contrast first word before the claim word
    ("Nicht heute, sondern gespeichert.", False, False),
    ("Not today, but saved.", False, False),
    ("Nicht hier, aber gespeichert.", False, False),
    ("No, instead saved.", False, False),
    # negation fourth word before: out of reach of both
    ("Nicht heute, sondern gestern gespeichert.", True, False),
    ("Not today but yesterday saved.", True, False),
    # contrast second, negation third
    ("Nicht, sondern heute gespeichert.", False, False),
    # negation nearer than the contrast: the claim word is denied
    ("Sondern nicht gespeichert.", False, True),
    ("But not saved.", False, True),
    ("Aber heute nicht gespeichert.", False, True),
    # a contrast word alone neither negates nor denies
    ("Aber gespeichert.", True, False),
    ("Jedoch heute gespeichert.", True, False),
    # the negated word before the contrast is denied, the one after it is not
    ("Nicht gespeichert, sondern nur vorgeschlagen.", False, True),
    ("Nicht gelöscht, doch gespeichert.", False, True),
]


@pytest.mark.parametrize(("text", "claims", "denies"), CONTRAST_CASES)
def test_around_a_contrast_word_a_claim_is_negated_within_three_words_and_a_denial_ends_at_the_contrast(
    text: str, claims: bool, denies: bool
) -> None:
    result = (claims_change(text), denies_change(text))

    assert result == (claims, denies)


def test_an_answer_can_deny_one_change_and_claim_another() -> None:
    text = "Nicht gelöscht, sondern aktualisiert und veröffentlicht."

    claims, denies = claims_change(text), denies_change(text)

    assert (claims, denies) == (True, True)


@pytest.mark.parametrize(
    ("message", "go_on"),
    [
        ("weiter", True),
        ("Weiter!", True),
        ("  mach weiter ... ", True),
        ("Mach weiter.", True),
        ("fortfahren", True),
        ("ok, weiter", True),
        ("OK weiter", True),
        ("alles approved", True),
        ("Habe alles freigegeben!", True),
        ("ich habe freigegeben", True),
        ("freigegeben 👍", True),
        ("go on", True),
        ("Continue.", True),
        ("proceed", True),
        ("approved", True),
        ("I approved it!", True),
        ("I\u2019ve approved it", True),
        ("Done, go on.", True),
        ("weiter bitte prüf die Seite", False),
        ("Mach weiter mit der Seite Kontakt", False),
        ("Ich habe alles freigegeben, jetzt bitte noch das Bild", False),
        ("Please continue with the next page.", False),
        ("weiterleiten", False),
        ("ja", False),
        ("ok", False),
        ("", False),
        ("...", False),
    ],
)
def test_only_a_whole_message_from_the_list_is_a_go_on(message: str, go_on: bool) -> None:
    result = is_go_on(message)

    assert result is go_on


def test_every_go_on_phrase_is_written_in_the_form_a_message_is_compared_in() -> None:
    normal = re.compile(r"^[^\W_]+(?:'[^\W_]+)*(?: [^\W_]+(?:'[^\W_]+)*)*$")

    malformed = sorted(
        phrase for phrase in GO_ON_PHRASES if not normal.match(phrase) or phrase != phrase.lower()
    )

    assert malformed == []


def test_the_word_lists_do_not_overlap() -> None:
    claims_that_negate = CLAIM_WORDS & NEGATIONS
    german_and_english = CLAIM_WORDS_DE & CLAIM_WORDS_EN

    assert claims_that_negate == set()
    assert german_and_english == set()
    assert CLAIM_WORDS <= DENIAL_WORDS
    assert "set" not in CLAIM_WORDS


# Words that are neither claim, denial, negation nor contrast words.
FILLER = st.sampled_from(
    ["die", "Seite", "Titel", "heute", "the", "page", "title", "was", "has", "been", "uid"]
)
FILLERS = st.lists(FILLER, max_size=6)
CLAIM = st.sampled_from(sorted(CLAIM_WORDS))


@given(before=FILLERS, claim=CLAIM, after=FILLERS)
def test_a_single_claim_word_among_neutral_words_claims_a_change(
    before: list[str], claim: str, after: list[str]
) -> None:
    text = " ".join([*before, claim, *after])

    result = claims_change(text)

    assert result is True


@given(before=FILLERS, claim=CLAIM, after=FILLERS, gap=st.integers(min_value=0, max_value=2))
def test_nicht_up_to_three_words_before_the_only_claim_word_makes_it_no_claim(
    before: list[str], claim: str, after: list[str], gap: int
) -> None:
    text = " ".join([*before, "nicht", *["Seite"] * gap, claim, *after])

    result = claims_change(text)

    assert result is False
    assert denies_change(text) is True


@given(before=FILLERS, claim=CLAIM, gap=st.integers(min_value=3, max_value=6))
def test_a_negation_four_or_more_words_before_leaves_the_claim(
    before: list[str], claim: str, gap: int
) -> None:
    text = " ".join([*before, "not", *["page"] * gap, claim])

    result = claims_change(text)

    assert result is True


# Separators that hold no letter or digit: punctuation, line breaks, Markdown marks.
SEPARATOR = st.sampled_from(
    [" ", "\n", "\r\n", ", ", ". ", "! ", "? ", ": ", "; ", " – ", " **", "** ", "\n- ", "\n\n", " `", "\n> "]
)
WORD = st.sampled_from(
    ["nicht", "kein", "not", "nothing", "gespeichert", "updated", "Seite", "page", "sondern", "or"]
)


@given(words=st.lists(WORD, min_size=1, max_size=8), data=st.data())
def test_what_stands_between_the_words_never_changes_the_claim(words: list[str], data: st.DataObject) -> None:
    separators = data.draw(st.lists(SEPARATOR, min_size=len(words) - 1, max_size=len(words) - 1))
    text = words[0] + "".join(separator + word for separator, word in zip(separators, words[1:], strict=True))

    result = claims_change(text)

    assert result is claims_change(" ".join(words))


@given(
    phrase=st.sampled_from(sorted(GO_ON_PHRASES)),
    trailing=st.text(alphabet=" \t\n.!?…,;:", max_size=4),
    upper=st.booleans(),
)
def test_a_listed_phrase_stays_a_go_on_whatever_its_case_and_trailing_punctuation(
    phrase: str, trailing: str, upper: bool
) -> None:
    message = (phrase.upper() if upper else phrase) + trailing

    result = is_go_on(message)

    assert result is True


@given(
    phrase=st.sampled_from(sorted(GO_ON_PHRASES)),
    suffix=st.sampled_from(
        [" bitte prüf die Seite", " with the next page", " und dann das Bild", " Seite 5"]
    ),
)
def test_a_longer_sentence_that_contains_a_phrase_is_no_go_on(phrase: str, suffix: str) -> None:
    message = phrase + suffix

    result = is_go_on(message)

    assert result is False


def _normalised_by_patterns(message: str) -> str:
    """The comparison form of a message in regular expressions: lower-cased (both single quotation marks
    as an apostrophe), the trailing non-word characters and underscores dropped, each run of whitespace and
    commas one space."""
    plain = message.lower().replace("\u2019", "'").replace("\u2018", "'").strip()
    return re.sub(r"[\s,]+", " ", re.sub(r"[\W_]+$", "", plain)).strip()


_SEPARATORS = st.text(alphabet=" \t\n\r\x0b\x0c\x1c\u00a0\u2028\u3000,.!?_-'\u2019*", max_size=4)


@given(
    message=st.one_of(
        st.text(),
        st.lists(
            st.one_of(st.sampled_from(sorted(GO_ON_PHRASES)), _SEPARATORS, st.text(max_size=3)), max_size=6
        ).map("".join),
    )
)
def test_a_message_is_compared_in_the_form_the_patterns_give_it(message: str) -> None:
    result = _normalise_message(message)

    assert result == _normalised_by_patterns(message)
    assert is_go_on(message) is (result in GO_ON_PHRASES)


@pytest.mark.parametrize("word", ["geändert", "hinzugefügt", "übernommen", "gelöscht"])
def test_a_claim_word_written_with_combining_marks_is_the_same_word(word: str) -> None:
    decomposed = unicodedata.normalize("NFD", word)

    assert decomposed != word
    assert (
        claims_change(f"Ich habe den Titel {decomposed}.")
        is claims_change(f"Ich habe den Titel {word}.")
        is True
    )
    assert denies_change(f"Ich habe nichts {decomposed}.") is denies_change(f"Ich habe nichts {word}.")
