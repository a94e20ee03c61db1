"""An administrator sign-in kept across reloads: a token the server signed, that expires, that a sign-out
ends, and that holds neither the password nor its hash."""

from __future__ import annotations

import base64

import pytest

from adapters import admin_sessions
from adapters.admin_sessions import SignedOut, TokenCheck, check, issue, read

KEY = b"k" * 32
OTHER_KEY = b"o" * 32
NOW = 1_767_225_600
HOUR_S = 3600


def test_a_token_the_server_issued_is_valid_until_it_expires() -> None:
    token = issue(KEY, now=NOW, lifetime_s=HOUR_S)

    during = check(KEY, token, now=NOW + HOUR_S - 1, lifetime_s=HOUR_S, signed_out=SignedOut())
    after = check(KEY, token, now=NOW + HOUR_S, lifetime_s=HOUR_S, signed_out=SignedOut())

    assert (during, after) == (TokenCheck.VALID, TokenCheck.EXPIRED)


def test_a_token_signed_with_another_key_is_forged() -> None:
    token = issue(OTHER_KEY, now=NOW, lifetime_s=HOUR_S)

    assert check(KEY, token, now=NOW, lifetime_s=HOUR_S, signed_out=SignedOut()) is TokenCheck.FORGED


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda e, s, m: f"{e + 86_400}.{s}.{m}", id="a later expiry"),
        pytest.param(lambda e, s, m: f"{e}.{'A' * 22}.{m}", id="another session id"),
        pytest.param(lambda e, s, m: f"{e}.{s}.{'A' * 43}", id="another signature"),
    ],
)
def test_a_token_changed_in_any_part_is_forged(change) -> None:
    expiry, session, signature = issue(KEY, now=NOW, lifetime_s=HOUR_S).split(".")

    forged = change(int(expiry), session, signature)

    assert check(KEY, forged, now=NOW, lifetime_s=2 * 86_400, signed_out=SignedOut()) is TokenCheck.FORGED


@pytest.mark.parametrize(
    "token",
    ["", "true", "1.2.3", "abc.defghijklmnopqrstuvw.xyz", "1767229200..x", "1767229200.a.b.c", "ü" * 80],
)
def test_anything_but_expiry_session_and_signature_is_malformed(token: str) -> None:
    assert check(KEY, token, now=NOW, lifetime_s=HOUR_S, signed_out=SignedOut()) is TokenCheck.MALFORMED


def test_a_token_lasting_longer_than_the_sign_in_may_last_now_is_refused_as_expired() -> None:
    token = issue(KEY, now=NOW, lifetime_s=24 * HOUR_S)

    assert check(KEY, token, now=NOW, lifetime_s=HOUR_S, signed_out=SignedOut()) is TokenCheck.EXPIRED


def test_a_signed_out_session_is_refused_though_its_token_has_not_expired() -> None:
    signed_out = SignedOut()
    token = issue(KEY, now=NOW, lifetime_s=HOUR_S)
    parsed = read(token)
    assert parsed is not None

    signed_out.add(parsed, now=NOW + 60)

    assert check(KEY, token, now=NOW + 120, lifetime_s=HOUR_S, signed_out=signed_out) is TokenCheck.SIGNED_OUT
    other = issue(KEY, now=NOW, lifetime_s=HOUR_S)
    assert check(KEY, other, now=NOW + 120, lifetime_s=HOUR_S, signed_out=signed_out) is TokenCheck.VALID


def test_a_signed_out_session_is_forgotten_once_its_token_has_expired() -> None:
    signed_out = SignedOut()
    first = read(issue(KEY, now=NOW, lifetime_s=HOUR_S))
    later = read(issue(KEY, now=NOW + 2 * HOUR_S, lifetime_s=HOUR_S))
    assert first is not None and later is not None
    signed_out.add(first, now=NOW)

    signed_out.add(later, now=NOW + 2 * HOUR_S)

    assert first.session_id not in signed_out and later.session_id in signed_out


def test_every_token_is_of_a_new_random_session() -> None:
    sessions = {read(issue(KEY, now=NOW, lifetime_s=HOUR_S)) for _ in range(100)}

    assert len({token.session_id for token in sessions if token is not None}) == 100


def test_a_token_holds_its_expiry_a_session_id_and_a_signature_and_nothing_else() -> None:
    password, stored_hash = "correct horse battery staple", "pbkdf2_sha256$600000$c2FsdA$aGFzaA"

    token = issue(KEY, now=NOW, lifetime_s=HOUR_S, session_id="s" * 22)

    expiry, session, signature = token.split(".")
    assert (int(expiry), session) == (NOW + HOUR_S, "s" * 22)
    assert len(base64.urlsafe_b64decode(signature + "=")) == 32  # an HMAC-SHA256
    assert password not in token and stored_hash not in token and KEY.decode() not in token


def test_without_a_configured_secret_the_key_is_this_processs_own_and_with_one_its_bytes() -> None:
    made = admin_sessions.key(None)

    assert made == admin_sessions.key("") and len(made) == admin_sessions.KEY_BYTES
    assert admin_sessions.key("s" * 32) == b"s" * 32 != made
