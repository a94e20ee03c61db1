"""An administrator sign-in kept across reloads: a signed, expiring token the browser holds, checked here.

A token is "<expiry>.<session id>.<signature>": the expiry in unix seconds, a random session id (16 bytes) and
HMAC-SHA256 over the purpose, the expiry and the session id with a key only the server holds, both in URL-safe
base64 without padding. It carries neither the password nor its hash: whoever holds a token is an
administrator until its expiry, unless its session was signed out, and no one can make one without the key.

The key is RUNRECORD_ADMIN_SESSION_SECRET when it is set, else one made when this process started (so a
restart of the dashboard signs every administrator out). Signed-out sessions are remembered in this process
until their tokens would have expired anyway.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import threading
from dataclasses import dataclass
from enum import StrEnum

PURPOSE = "runrecord-admin-session.v1"  # a token signed for another purpose with the same key is refused
SESSION_ID_BYTES = 16  # 128 random bits: a session id is never guessed
KEY_BYTES = 32  # SHA-256's output length (RFC 2104, section 3)
TOKEN = re.compile(
    r"(?P<expiry>[0-9]{1,12})\.(?P<session>[A-Za-z0-9_-]{22})\.(?P<signature>[A-Za-z0-9_-]{43})"
)

_PROCESS_KEY = secrets.token_bytes(KEY_BYTES)  # made once per dashboard start, never written anywhere


class TokenCheck(StrEnum):
    VALID = "valid"
    MALFORMED = "malformed"  # not "<expiry>.<session id>.<signature>"
    FORGED = "forged"  # the signature does not match: made without the key, or with another key
    EXPIRED = "expired"  # past its expiry, or lasting longer than the sign-in may last now
    SIGNED_OUT = "signed out"


@dataclass(frozen=True)
class Token:
    """A token as read: its expiry and session id (whether it is valid is `check`'s answer)."""

    expiry: int
    session_id: str


def key(secret: str | None) -> bytes:
    """The signing key: the configured secret's bytes, or this process's own key when none is configured."""
    return secret.encode("utf-8") if secret else _PROCESS_KEY


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _signature(signing_key: bytes, expiry: int, session_id: str) -> str:
    message = f"{PURPOSE}.{expiry}.{session_id}".encode("ascii")
    return _b64(hmac.new(signing_key, message, hashlib.sha256).digest())


def issue(signing_key: bytes, *, now: int, lifetime_s: int, session_id: str | None = None) -> str:
    """A new token, valid from `now` for `lifetime_s` seconds, for a new random session (or the one given)."""
    chosen = session_id if session_id is not None else _b64(secrets.token_bytes(SESSION_ID_BYTES))
    expiry = now + lifetime_s
    return f"{expiry}.{chosen}.{_signature(signing_key, expiry, chosen)}"


def read(token: str) -> Token | None:
    """The token's expiry and session id when it has a token's shape, else None; its signature unchecked."""
    found = TOKEN.fullmatch(token)
    if found is None:
        return None
    return Token(int(found["expiry"]), found["session"])


class SignedOut:
    """The sessions signed out in this process, each until its token would have expired (thread-safe: every
    browser tab runs its script in a thread of its own)."""

    def __init__(self) -> None:
        self._until: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, token: Token, *, now: int) -> None:
        """Remember the token's session as signed out; forget those whose tokens have expired."""
        with self._lock:
            self._until = {session: until for session, until in self._until.items() if until > now}
            self._until[token.session_id] = token.expiry

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._until


SIGNED_OUT = SignedOut()


def check(
    signing_key: bytes, token: str, *, now: int, lifetime_s: int, signed_out: SignedOut = SIGNED_OUT
) -> TokenCheck:
    """Whether a token is one this server signed, unexpired, lasting no longer than `lifetime_s` from now,
    and of a session not signed out. The signature is compared in constant time."""
    parsed = read(token)
    if parsed is None:
        return TokenCheck.MALFORMED
    expected = _signature(signing_key, parsed.expiry, parsed.session_id)
    if not hmac.compare_digest(expected, token.rsplit(".", 1)[1]):
        return TokenCheck.FORGED
    # A token made under a longer RUNRECORD_ADMIN_SESSION_MINUTES lasts no longer than the setting allows now.
    if parsed.expiry <= now or parsed.expiry > now + lifetime_s:
        return TokenCheck.EXPIRED
    if parsed.session_id in signed_out:
        return TokenCheck.SIGNED_OUT
    return TokenCheck.VALID
