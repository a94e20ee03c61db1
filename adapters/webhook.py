"""A JSON document POSTed to a webhook (RUNRECORD_ALERT_WEBHOOK), with a timeout and a bounded number of
tries.

A 2xx answer is delivered. A server error (5xx), 429, a timeout or a connection that fails is tried again
after a pause that doubles each time; any other answer (a 4xx: the request itself is wrong) is not, since
sending it again cannot help. The URL may carry a token, so no message here repeats it: `location` names the
scheme and host only. A user and password in the URL are sent as HTTP basic credentials.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

USER_AGENT = "runrecord-alerts"
RETRY_STATUSES = frozenset({429})  # and every 5xx


@dataclass(frozen=True)
class Policy:
    """How long to wait for an answer, how often to try, and the first pause between tries."""

    timeout_s: float
    attempts: int
    backoff_s: float


@dataclass(frozen=True)
class Delivery:
    """What became of one POST: delivered, or why not after how many tries."""

    delivered: bool
    attempts: int
    reason: str = ""  # "" when delivered; else "HTTP 500", "timed out after 5 s", "connection refused", …


def location(url: str) -> str:
    """The webhook as a message may name it: its scheme and host, never its path or query (a token)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{'' if parts.port is None else f':{parts.port}'}"


def post_json(
    url: str,
    document: Mapping[str, Any],
    policy: Policy,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Delivery:
    """POST the document as JSON; tried again after a server error, a timeout or a failed connection."""
    body = json.dumps(document, ensure_ascii=False).encode("utf-8")
    reason = ""
    for attempt in range(1, policy.attempts + 1):
        retry, reason = _post_once(url, body, policy.timeout_s)
        if not reason:
            return Delivery(True, attempt)
        if not retry or attempt == policy.attempts:
            return Delivery(False, attempt, reason)
        sleep(policy.backoff_s * 2 ** (attempt - 1))
    return Delivery(False, policy.attempts, reason)


def _post_once(url: str, body: bytes, timeout_s: float) -> tuple[bool, str]:
    """One POST: (whether a failure is worth another try, why it failed; "" when delivered)."""
    address, credentials = _without_user(url)
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT}
    if credentials is not None:
        headers["Authorization"] = f"Basic {credentials}"
    request = urllib.request.Request(address, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            status = int(answer.status)
    except urllib.error.HTTPError as error:
        status = int(error.code)
    except TimeoutError:
        return True, f"timed out after {timeout_s:g} s"
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            return True, f"timed out after {timeout_s:g} s"
        return True, _reason(error.reason)
    except OSError as error:  # a connection reset while reading the answer
        return True, _reason(error)
    if 200 <= status < 300:
        return False, ""
    return status >= 500 or status in RETRY_STATUSES, f"HTTP {status}"


def _without_user(url: str) -> tuple[str, str | None]:
    """The URL without its user information, and that as HTTP basic credentials (RFC 7617) when there is one:
    urllib would take `user:password@host` for a host name."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return urlunsplit(parts._replace(netloc=host)), base64.b64encode(pair.encode("utf-8")).decode("ascii")


def _reason(error: object) -> str:
    if isinstance(error, OSError) and error.strerror:
        return str(error.strerror).lower()
    return " ".join(str(error).split()) or type(error).__name__
