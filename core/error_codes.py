"""Failure codes and notice labels, phrased per reader and language (001_…, "A failure carries its kind").

The conversation stores a code beside its error message, and an assistant message a notice; the sentence
is rendered per request, because a stored sentence is frozen in one language and for one reader (001_…,
the reason NEXT-159 moved the pause notice out of the stored field).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Language = Literal["de", "en"]


class ErrorCode(StrEnum):
    """The codes nr-mcp-agent stores in tx_nrmcpagent_conversation.error_code (its ConversationErrorCode)."""

    PROVIDER_NOT_CONFIGURED = "providerNotConfigured"
    CHAT_NOT_CONFIGURED = "chatNotConfigured"


@dataclass(frozen=True)
class UnknownCode:
    """A stored code this version does not know (e.g. "handBack.staleTurn"): kept as found, not an error."""

    stored: str


class Reader(StrEnum):
    ADMINISTRATOR = "administrator"
    EDITOR = "editor"


class Notice(StrEnum):
    """The notices an assistant message carries (message payload `notice`)."""

    NOTHING_SAVED = "nothingSaved"
    RUN_FINISHED_OUTSIDE = "runFinishedOutside"


@dataclass(frozen=True)
class Module:
    """A backend module an administrator opens to fix a failure: its route identifier and its label."""

    identifier: str
    label: str


@dataclass(frozen=True)
class RenderedError:
    text: str
    module: Module | None


# 001_…, "A failure carries its kind": "a link to the nr-llm providers or tasks module". Identifiers and
# labels are nr-llm's own (Configuration/Backend/Modules.php, locallang_mod*.xlf): a missing API key is
# fixed on the provider, a missing Task, configuration or model in the tasks module.
MODULES: Mapping[ErrorCode, tuple[str, Mapping[Language, str]]] = {
    ErrorCode.PROVIDER_NOT_CONFIGURED: ("nrllm_providers", {"de": "LLM › Anbieter", "en": "LLM › Providers"}),
    ErrorCode.CHAT_NOT_CONFIGURED: ("nrllm_tasks", {"de": "LLM › Aufgaben", "en": "LLM › Tasks"}),
}

# 001_…: "everyone else a localised sentence that tells them to ask the administration". The chat addresses
# its German reader with "du" (its own labels: "Von dir abgelehnt").
EDITOR_SENTENCES: Mapping[ErrorCode, Mapping[Language, str]] = {
    ErrorCode.PROVIDER_NOT_CONFIGURED: {
        "de": "Der KI-Anbieter des Chats ist nicht eingerichtet. Bitte wende dich an die Administration.",
        "en": "The chat's AI provider is not set up. Please ask your administrator to set it up.",
    },
    ErrorCode.CHAT_NOT_CONFIGURED: {
        "de": "Der Chat ist nicht fertig eingerichtet. Bitte wende dich an die Administration.",
        "en": "The chat is not fully set up. Please ask your administrator to set it up.",
    },
}

# For an administrator whose row carries a code but no message: the kind, without sending them to
# themselves.
ADMINISTRATOR_FALLBACKS: Mapping[ErrorCode, Mapping[Language, str]] = {
    ErrorCode.PROVIDER_NOT_CONFIGURED: {
        "de": "Der KI-Anbieter ist nicht nutzbar konfiguriert (API-Schlüssel fehlt oder wird abgelehnt).",
        "en": "The AI provider is not usable as configured (API key missing or rejected).",
    },
    ErrorCode.CHAT_NOT_CONFIGURED: {
        "de": "Für den Chat fehlt die nr-llm-Aufgabe, ihre Konfiguration oder ihr Modell.",
        "en": "The chat's nr-llm Task, its configuration or its model is missing.",
    },
}

# 001_…, "Decision": "The chat renders it as a label in the reader's language: 'Nothing was saved in this
# step'"; runFinishedOutside names the records the run wrote (noticeArgs, a list such as ["pages:10073"]).
NOTICE_LABELS: Mapping[Notice, Mapping[Language, str]] = {
    Notice.NOTHING_SAVED: {
        "de": "In diesem Schritt wurde nichts gespeichert",
        "en": "Nothing was saved in this step",
    },
    Notice.RUN_FINISHED_OUTSIDE: {
        "de": "Außerhalb des Chats entschieden und abgeschlossen. Gespeichert: {records}",
        "en": "Decided and finished outside the chat. Saved: {records}",
    },
}
RUN_FINISHED_OUTSIDE_NOTHING_WRITTEN: Mapping[Language, str] = {
    "de": "Außerhalb des Chats entschieden und abgeschlossen. Es wurde nichts gespeichert",
    "en": "Decided and finished outside the chat. Nothing was saved",
}


def read_code(stored: str) -> ErrorCode | UnknownCode | None:
    """A stored error_code is a known code, an unknown code kept as found, or None when the row has none."""
    if stored == "":
        return None
    try:
        return ErrorCode(stored)
    except ValueError:
        return UnknownCode(stored)


def render_error(code: str, stored_message: str, reader: Reader, language: Language) -> RenderedError:
    """A known code: stored text and module for administrators, a sentence for editors; else stored text."""
    kind = read_code(code)
    if not isinstance(kind, ErrorCode):
        return RenderedError(stored_message, None)
    if reader == Reader.EDITOR:
        return RenderedError(EDITOR_SENTENCES[kind][language], None)
    identifier, labels = MODULES[kind]
    text = stored_message if stored_message.strip() else ADMINISTRATOR_FALLBACKS[kind][language]
    return RenderedError(text, Module(identifier, labels[language]))


def notice_label(notice: Notice, language: Language, records: Sequence[str] = ()) -> str:
    """A notice is labelled in the reader's language; runFinishedOutside names the records written."""
    kind = Notice(notice)
    if kind is Notice.RUN_FINISHED_OUTSIDE:
        if not records:
            return RUN_FINISHED_OUTSIDE_NOTHING_WRITTEN[language]
        return NOTICE_LABELS[kind][language].format(records=", ".join(records))
    return NOTICE_LABELS[kind][language]
