"""The administrator password of the dashboard, kept as a PBKDF2-SHA256 hash and compared in constant time.

The stored form is "pbkdf2_sha256$iterations$salt$hash" (salt and hash in URL-safe base64 without padding),
the shape Django and passlib use, so that a hash made elsewhere with the same parameters also works. The plain
password is never stored: `runrecord hash-password` prints the hash for RUNRECORD_ADMIN_PASSWORD_HASH.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

ALGORITHM = "pbkdf2_sha256"

# OWASP's Password Storage Cheat Sheet (2023) recommends 600,000 iterations of PBKDF2-HMAC-SHA256; one
# check then costs a few hundred milliseconds, which a sign-in can afford and a guesser cannot.
ITERATIONS = 600_000

# A stored hash with fewer iterations than this is refused rather than accepted as a weak password check.
MIN_ITERATIONS = 100_000

SALT_BYTES = 16  # 128 bits: no two hashes of the same password share a salt
HASH_BYTES = 32  # SHA-256's own output length

# Enough for a password a person types once per start of the demo: 16 URL-safe characters, 96 bits.
ONE_TIME_PASSWORD_BYTES = 12


class PasswordHashError(ValueError):
    """A stored hash that is not "pbkdf2_sha256$iterations$salt$hash" with enough iterations."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _derive(password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations, dklen=HASH_BYTES)


def hash_password(password: str, *, iterations: int = ITERATIONS, salt: bytes | None = None) -> str:
    """The stored form of a password: "pbkdf2_sha256$iterations$salt$hash" with a fresh random salt."""
    if not password:
        raise PasswordHashError("an empty password cannot be an administrator password")
    if iterations < MIN_ITERATIONS:
        raise PasswordHashError(f"at least {MIN_ITERATIONS:,} iterations, not {iterations:,}")
    chosen = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    return f"{ALGORITHM}${iterations}${_b64(chosen)}${_b64(_derive(password, chosen, iterations))}"


def parse_hash(stored: str) -> tuple[int, bytes, bytes]:
    """Iterations, salt and hash of a stored form; PasswordHashError when it is not one."""
    parts = stored.strip().split("$")
    if len(parts) != 4 or parts[0] != ALGORITHM:
        raise PasswordHashError(f'not a "{ALGORITHM}$iterations$salt$hash" value')
    try:
        iterations = int(parts[1])
        salt, expected = _unb64(parts[2]), _unb64(parts[3])
    except (ValueError, binascii.Error) as error:
        raise PasswordHashError(f"unreadable iterations, salt or hash ({error})") from error
    if iterations < MIN_ITERATIONS:
        raise PasswordHashError(
            f"at least {MIN_ITERATIONS:,} iterations are needed, the hash has {iterations:,}"
        )
    if not salt or len(expected) != HASH_BYTES:
        raise PasswordHashError(f"the salt is empty or the hash is not {HASH_BYTES} bytes")
    return iterations, salt, expected


def verify_password(password: str, stored: str) -> bool:
    """Whether the password matches the stored form; compared with hmac.compare_digest (constant time)."""
    iterations, salt, expected = parse_hash(stored)
    return hmac.compare_digest(_derive(password, salt, iterations), expected)


def one_time_password() -> str:
    """A random password for one start of the dashboard (the demo prints it; only its hash is passed on)."""
    return secrets.token_urlsafe(ONE_TIME_PASSWORD_BYTES)
