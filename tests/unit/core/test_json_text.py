"""core.json_text: stored JSON read with every text writable (a lone surrogate escape as U+FFFD)."""

from __future__ import annotations

import json

import pytest

from core.json_text import REPLACEMENT, loads


def test_a_lone_surrogate_escape_reads_as_the_replacement_character_in_keys_and_values_at_any_depth() -> None:
    text = r'{"a\udc00": ["x\ud800y", {"b": "\udfff"}], "n": 1, "t": true, "z": null}'

    value = loads(text)

    assert value == {
        f"a{REPLACEMENT}": [f"x{REPLACEMENT}y", {"b": REPLACEMENT}],
        "n": 1,
        "t": True,
        "z": None,
    }
    json.dumps(value).encode("utf-8")  # writable: no surrogate is left


def test_a_surrogate_pair_written_as_two_escapes_is_the_character_it_names() -> None:
    assert loads(r'["\ud83d\udcdd", "\uD83D\uDCDD"]') == ["📝", "📝"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r'{"a": "\u00e4"}', {"a": "ä"}),
        (b'{"a": "\\ud800"}', {"a": REPLACEMENT}),
        (r'"\\ud800"', r"\ud800"),  # an escaped backslash before "ud800": six characters, no surrogate
        (
            b'"a\xed\xa0\x80b"',
            f"a{REPLACEMENT}b",
        ),  # a surrogate encoded as UTF-8 bytes, which json lets through
        ('"a\ud800b"'.encode("utf-16", "surrogatepass"), f"a{REPLACEMENT}b"),  # UTF-16, as json detects it
    ],
)
def test_text_or_bytes_read_as_json_reads_them_but_for_lone_surrogates(
    text: str | bytes, expected: object
) -> None:
    assert loads(text) == expected


@pytest.mark.parametrize("text", ["{", "", b"\xff", "[" * 100_000])
def test_what_json_cannot_read_raises_as_json_raises(text: str | bytes) -> None:
    with pytest.raises((ValueError, RecursionError)):
        json.loads(text)
    with pytest.raises((ValueError, RecursionError)):
        loads(text)
