"""Claim words, negations and "go on" phrases of the chat's answers and messages (001_…, 000_…).

The word lists are data; three functions read them, each by its own rule:

* `claims_change`: a completed answer claims a change (001_…, "Decision": the nothingSaved notice). A claim
  word claims unless one of the three words immediately before it is a negation; nothing else counts.
* `denies_change`: an answer denies that a change or a step took place (000_…, "Context": the denial
  the denial_rate metric counts), read clause by clause, a contrast word ending a negation's reach.
* `is_go_on`: a whole message is one of the "go on" / "I approved it" phrases (001_…, "Decision" and
  "Consequences", last bullet).

How a text becomes words, for all three: lower-cased (not case-folded, so "ß" stays "ß"), typographic
apostrophes made plain, words are Unicode letters and digits with inner apostrophes ("wasn't" is one word).
Everything else, punctuation, line breaks and Markdown marks (**, `, #, -, >), separates words and is no
word, so it never counts toward the three-word window. A hyphen or underscore separates too ("E-Mail" is two
words): that only ever shortens a negation's reach, the generous side 001_… asks for.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# 001_…, "Decision": German and English participles such as "erledigt", "gespeichert", "created", "updated".
# The list is generous on purpose: the notice is only stored when the run wrote nothing, so a match on an
# answer that merely talks about a change still yields a true notice, while a missing word hides a false
# claim. Only uninflected forms: "die gespeicherten Daten" names existing data more often than it claims
# a save.
# Left out on purpose:
# * "set": one spelling for the infinitive, the present tense, the participle and a noun, so it matches
#   proposals ("Shall I set the title to …?") and "a set of pages" far more often than a claim; a claim with
#   "set" nearly always carries another word of the list ("done", "updated") or its German "gesetzt".
# * "hidden", "versteckt", "made", "gemacht": adjectives or light verbs that describe a state or anything
#   at all ("the hidden field", "Vorschläge gemacht").
CLAIM_WORDS_DE: frozenset[str] = frozenset(
    {
        "erledigt",
        "gespeichert",
        "abgespeichert",
        "geändert",
        "verändert",
        "aktualisiert",
        "angelegt",
        "erstellt",
        "hinzugefügt",
        "eingefügt",
        "ergänzt",
        "gelöscht",
        "entfernt",
        "übernommen",
        "veröffentlicht",
        "ersetzt",
        "gesetzt",
        "eingetragen",
        "hinterlegt",
        "angepasst",
        "korrigiert",
        "umbenannt",
        "verschoben",
        "bearbeitet",
        "überarbeitet",
        "optimiert",
        "umgesetzt",
        "vorgenommen",
        "durchgeführt",
        "abgeschlossen",
        "hochgeladen",
        "ausgefüllt",
        "befüllt",
        "verknüpft",
        "zugewiesen",
        "kopiert",
        "übersetzt",
        "geschrieben",
        "freigeschaltet",
        "aktiviert",
        "deaktiviert",
        "ausgeblendet",
        "eingeblendet",
    }
)
CLAIM_WORDS_EN: frozenset[str] = frozenset(
    {
        "done",
        "saved",
        "stored",
        "changed",
        "modified",
        "updated",
        "created",
        "added",
        "inserted",
        "deleted",
        "removed",
        "published",
        "unpublished",
        "replaced",
        "edited",
        "adjusted",
        "corrected",
        "fixed",
        "renamed",
        "moved",
        "applied",
        "uploaded",
        "completed",
        "implemented",
        "filled",
        "assigned",
        "linked",
        "translated",
        "written",
        "rewritten",
        "optimized",
        "optimised",
        "enabled",
        "disabled",
    }
)
CLAIM_WORDS: frozenset[str] = CLAIM_WORDS_DE | CLAIM_WORDS_EN

# 001_…, "Decision": "not preceded by a negation such as 'nicht', 'nichts', 'kein' or 'not'". Every word
# ending in "n't" counts as well (`_is_negation`). Left out on purpose: "ohne"/"without" and "nein": a
# negation counted wrongly hides a false claim, the failure the notice exists for, while a missed one only
# adds a true notice.
NEGATIONS: frozenset[str] = frozenset(
    {
        # German
        "nicht",
        "nichts",
        "kein",
        "keine",
        "keinen",
        "keinem",
        "keiner",
        "keines",
        "nie",
        "niemals",
        "weder",
        # English
        "not",
        "no",
        "nothing",
        "none",
        "never",
        "neither",
        "nor",
        "cannot",
    }
)
NEGATION_SUFFIX = "n't"

# 001_…, "Decision": "not preceded by a negation … within three words". The three words immediately before
# the claim word in the text, wherever a sentence, a line or a list item ends between them.
NEGATION_WINDOW = 3

# denies_change only: a contrast ends a negation's reach, so "nicht gelöscht, sondern aktualisiert" denies the
# deletion and not the update. claims_change knows no contrast words (001_…: "within three words").
CONTRAST_WORDS: frozenset[str] = frozenset({"sondern", "aber", "jedoch", "doch", "but", "however", "instead"})

# 000_…, "Context": the failure is an answer that says nothing was checked or changed and the tour had not
# taken place. Two-word entries are read as one word, so that the negation window counts them once.
DENIAL_WORD_PAIRS: frozenset[tuple[str, str]] = frozenset(
    {("take", "place"), ("taken", "place"), ("took", "place"), ("carried", "out")}
)
# A denial is any of these words, or a claim word, under a negation.
DENIAL_WORDS: frozenset[str] = (
    CLAIM_WORDS
    | frozenset(
        {
            # the change as a noun: "keine Änderungen", "no changes were made"
            "änderung",
            "änderungen",
            "change",
            "changes",
            "modification",
            "modifications",
            "edit",
            "edits",
            # the step as an event: "hat nicht stattgefunden", "nothing happened", "nichts geprüft"
            "stattgefunden",
            "passiert",
            "geschehen",
            "ausgeführt",
            "geprüft",
            "happened",
            "happen",
            "occurred",
            "performed",
            "executed",
            "checked",
        }
    )
    | frozenset(f"{first} {second}" for first, second in DENIAL_WORD_PAIRS)
)

# 001_…, "Decision": "the whole message is one of a short, explicit list of 'go on' and 'I approved it'
# phrases"; "Consequences": a phrase outside the list, or a longer sentence that contains one, is an
# ordinary request. Written in the form `_normalise_message` gives a message. Left out on purpose: bare
# "ja", "ok", "yes" answer a question as often as they ask to go on.
GO_ON_PHRASES: frozenset[str] = frozenset(
    {
        # German: go on
        "weiter",
        "weiter bitte",
        "bitte weiter",
        "mach weiter",
        "bitte mach weiter",
        "ja mach weiter",
        "ok weiter",
        "okay weiter",
        "ok mach weiter",
        "ja weiter",
        "weitermachen",
        "fortfahren",
        "bitte fortfahren",
        "fahr fort",
        "fahre fort",
        # German: I approved it
        "freigegeben",
        "alles freigegeben",
        "habe freigegeben",
        "hab freigegeben",
        "ich habe freigegeben",
        "habe alles freigegeben",
        "hab alles freigegeben",
        "ich habe alles freigegeben",
        "ist freigegeben",
        "genehmigt",
        "alles genehmigt",
        "ich habe genehmigt",
        "approved",
        "alles approved",
        "erledigt weiter",
        # English: go on
        "go on",
        "please go on",
        "continue",
        "please continue",
        "continue please",
        "proceed",
        "please proceed",
        "go ahead",
        "carry on",
        "keep going",
        "ok go on",
        "ok continue",
        "okay continue",
        # English: I approved it
        "all approved",
        "approved it",
        "i approved it",
        "i've approved it",
        "i have approved it",
        "i approved everything",
        "i've approved everything",
        "done go on",
        "done continue",
    }
)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
# denies_change only: a denial is read within its clause, which a sentence's end, a comma or a dash set apart
# (a hyphen inside a word does not): "No problem, I updated the title" and "Kein Problem – erledigt" deny
# nothing.
_CLAUSE_END = re.compile(r"[.!?;:\n\r,\u2013\u2014]+|\s-+\s")


def _plain(text: str) -> str:
    # Composed (NFC) as the word lists are written: an "ä" typed as "a" and a combining diaeresis (macOS
    # pastes text so) is otherwise no letter of the word, which then splits in two.
    return unicodedata.normalize("NFC", text).lower().replace("\u2019", "'").replace("\u2018", "'")


def _words(text: str) -> list[str]:
    return _WORD.findall(_plain(text))


def _is_negation(word: str) -> bool:
    return word in NEGATIONS or word.endswith(NEGATION_SUFFIX)


def claims_change(text: str) -> bool:
    """An answer claims a change when a claim word has no negation among the three words before it."""
    words = _words(text)
    return any(
        word in CLAIM_WORDS and not any(map(_is_negation, words[max(0, index - NEGATION_WINDOW) : index]))
        for index, word in enumerate(words)
    )


def _denial_clauses(text: str) -> Iterator[tuple[str, ...]]:
    """The text's clauses as words, each DENIAL_WORD_PAIRS pair merged into one word."""
    for sentence in _CLAUSE_END.split(text):
        merged: list[str] = []
        for word in _words(sentence):
            if merged and (merged[-1], word) in DENIAL_WORD_PAIRS:
                merged[-1] = f"{merged[-1]} {word}"
            else:
                merged.append(word)
        if merged:
            yield tuple(merged)


def _denied(words: tuple[str, ...], index: int) -> bool:
    """A negation within the three words before, nearer than any contrast word."""
    for before in reversed(words[max(0, index - NEGATION_WINDOW) : index]):
        if before in CONTRAST_WORDS:
            return False
        if _is_negation(before):
            return True
    return False


def denies_change(text: str) -> bool:
    """An answer denies a change when a claim, change or event word is negated within three words before."""
    return any(
        word in DENIAL_WORDS and _denied(words, index)
        for words in _denial_clauses(text)
        for index, word in enumerate(words)
    )


def _normalise_message(message: str) -> str:
    """The message as GO_ON_PHRASES are written: lower-cased, without the characters that are not alphanumeric
    at its end, each run of whitespace and commas one space, trimmed."""
    plain = _plain(message)
    end = len(plain)
    while end and not plain[end - 1].isalnum():
        end -= 1
    return " ".join(plain[:end].replace(",", " ").split())


def is_go_on(message: str) -> bool:
    """A message is a "go on" when all of it, trimmed, without trailing punctuation, is a listed phrase."""
    return _normalise_message(message) in GO_ON_PHRASES
