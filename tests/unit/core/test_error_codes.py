"""Failure codes and notice labels per reader and language (001_…, "A failure carries its kind")."""

from typing import get_args

import pytest

from core.error_codes import (
    ADMINISTRATOR_FALLBACKS,
    EDITOR_SENTENCES,
    MODULES,
    ErrorCode,
    Language,
    Module,
    Notice,
    Reader,
    RenderedError,
    UnknownCode,
    notice_label,
    read_code,
    render_error,
)

STORED = "API key identifier is required for provider OpenAI"

RENDERED = [
    # code, reader, language, expected
    (
        "providerNotConfigured",
        Reader.ADMINISTRATOR,
        "de",
        RenderedError(STORED, Module("nrllm_providers", "LLM › Anbieter")),
    ),
    (
        "providerNotConfigured",
        Reader.ADMINISTRATOR,
        "en",
        RenderedError(STORED, Module("nrllm_providers", "LLM › Providers")),
    ),
    (
        "providerNotConfigured",
        Reader.EDITOR,
        "de",
        RenderedError(
            "Der KI-Anbieter des Chats ist nicht eingerichtet. Bitte wende dich an die Administration.", None
        ),
    ),
    (
        "providerNotConfigured",
        Reader.EDITOR,
        "en",
        RenderedError(
            "The chat's AI provider is not set up. Please ask your administrator to set it up.", None
        ),
    ),
    (
        "chatNotConfigured",
        Reader.ADMINISTRATOR,
        "de",
        RenderedError(STORED, Module("nrllm_tasks", "LLM › Aufgaben")),
    ),
    (
        "chatNotConfigured",
        Reader.ADMINISTRATOR,
        "en",
        RenderedError(STORED, Module("nrllm_tasks", "LLM › Tasks")),
    ),
    (
        "chatNotConfigured",
        Reader.EDITOR,
        "de",
        RenderedError(
            "Der Chat ist nicht fertig eingerichtet. Bitte wende dich an die Administration.", None
        ),
    ),
    (
        "chatNotConfigured",
        Reader.EDITOR,
        "en",
        RenderedError("The chat is not fully set up. Please ask your administrator to set it up.", None),
    ),
    # no code: shown as before, to everyone
    ("", Reader.ADMINISTRATOR, "de", RenderedError(STORED, None)),
    ("", Reader.ADMINISTRATOR, "en", RenderedError(STORED, None)),
    ("", Reader.EDITOR, "de", RenderedError(STORED, None)),
    ("", Reader.EDITOR, "en", RenderedError(STORED, None)),
    # an unknown code: kept, shown like no code
    ("handBack.staleTurn", Reader.ADMINISTRATOR, "de", RenderedError(STORED, None)),
    ("handBack.staleTurn", Reader.ADMINISTRATOR, "en", RenderedError(STORED, None)),
    ("handBack.staleTurn", Reader.EDITOR, "de", RenderedError(STORED, None)),
    ("handBack.staleTurn", Reader.EDITOR, "en", RenderedError(STORED, None)),
]


@pytest.mark.parametrize(("code", "reader", "language", "expected"), RENDERED)
def test_a_failure_is_phrased_for_its_reader_in_their_language(
    code: str, reader: Reader, language: Language, expected: RenderedError
) -> None:
    rendered = render_error(code, STORED, reader, language)

    assert rendered == expected


@pytest.mark.parametrize("code", list(ErrorCode))
@pytest.mark.parametrize("language", get_args(Language))
def test_an_editor_never_sees_the_stored_text(code: ErrorCode, language: Language) -> None:
    rendered = render_error(code.value, STORED, Reader.EDITOR, language)

    assert STORED not in rendered.text
    assert rendered.module is None


@pytest.mark.parametrize("code", list(ErrorCode))
@pytest.mark.parametrize("language", get_args(Language))
def test_an_administrator_without_a_stored_text_gets_the_kind(code: ErrorCode, language: Language) -> None:
    rendered = render_error(code.value, "  ", Reader.ADMINISTRATOR, language)

    assert rendered.text == ADMINISTRATOR_FALLBACKS[code][language]
    assert rendered.module is not None


def test_every_code_has_a_module_an_editor_sentence_and_a_fallback_in_every_language() -> None:
    languages = set(get_args(Language))

    incomplete = [
        code
        for code in ErrorCode
        if set(MODULES[code][1]) != languages
        or set(EDITOR_SENTENCES[code]) != languages
        or set(ADMINISTRATOR_FALLBACKS[code]) != languages
    ]

    assert incomplete == []


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("providerNotConfigured", ErrorCode.PROVIDER_NOT_CONFIGURED),
        ("chatNotConfigured", ErrorCode.CHAT_NOT_CONFIGURED),
        ("handBack.staleTurn", UnknownCode("handBack.staleTurn")),
        ("ProviderNotConfigured", UnknownCode("ProviderNotConfigured")),
        ("", None),
    ],
)
def test_a_stored_code_is_known_unknown_or_absent_never_an_error(
    stored: str, expected: ErrorCode | UnknownCode | None
) -> None:
    code = read_code(stored)

    assert code == expected


@pytest.mark.parametrize(
    ("notice", "language", "records", "expected"),
    [
        (Notice.NOTHING_SAVED, "de", (), "In diesem Schritt wurde nichts gespeichert"),
        (Notice.NOTHING_SAVED, "en", (), "Nothing was saved in this step"),
        (Notice.NOTHING_SAVED, "en", ("pages:1",), "Nothing was saved in this step"),
        (
            Notice.RUN_FINISHED_OUTSIDE,
            "de",
            ("pages:10073",),
            "Außerhalb des Chats entschieden und abgeschlossen. Gespeichert: pages:10073",
        ),
        (
            Notice.RUN_FINISHED_OUTSIDE,
            "en",
            ("pages:10073", "tt_content:512"),
            "Decided and finished outside the chat. Saved: pages:10073, tt_content:512",
        ),
        (
            Notice.RUN_FINISHED_OUTSIDE,
            "de",
            (),
            "Außerhalb des Chats entschieden und abgeschlossen. Es wurde nichts gespeichert",
        ),
        (Notice.RUN_FINISHED_OUTSIDE, "en", (), "Decided and finished outside the chat. Nothing was saved"),
    ],
)
def test_a_notice_is_labelled_in_the_readers_language(
    notice: Notice, language: Language, records: tuple[str, ...], expected: str
) -> None:
    label = notice_label(notice, language, records)

    assert label == expected


def test_a_notice_read_from_a_payload_string_is_labelled_like_the_enum() -> None:
    stored = "nothingSaved"

    label = notice_label(Notice(stored), "en")

    assert label == "Nothing was saved in this step"


def test_enum_values_match_the_upstream_strings() -> None:
    values = {*ErrorCode, *Notice}

    assert values == {"providerNotConfigured", "chatNotConfigured", "nothingSaved", "runFinishedOutside"}
