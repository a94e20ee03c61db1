"""RUNRECORD_ALERT_WEBHOOK: optional; when set, an http or https URL with a host, else one error line that
names the variable and not its value (a webhook URL may carry a token)."""

from __future__ import annotations

import pytest

from adapters import settings
from adapters.database import RunrecordError


@pytest.mark.parametrize("value", ["", "   "])
def test_an_unset_or_empty_webhook_means_no_post(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", value)

    assert settings.alert_webhook() is None


@pytest.mark.parametrize(
    "value",
    [
        "https://hooks.example.org/services/T0/B1/secret",
        "http://127.0.0.1:8080/hook?token=abc",
        "HTTPS://Hooks.Example.org",
    ],
)
def test_an_http_or_https_url_with_a_host_is_the_webhook(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", f" {value} ")

    assert settings.alert_webhook() == value


@pytest.mark.parametrize(
    "value",
    [
        "hooks.example.org/secret",
        "ftp://hooks.example.org/secret",
        "file:///etc/passwd",
        "https:///secret",
        "https://hooks.example.org:notaport/secret",
        "https://hooks.example.org/a secret",
        "javascript:alert(1)",
    ],
)
def test_anything_else_is_one_error_line_naming_the_variable_but_not_the_value(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", value)

    with pytest.raises(RunrecordError) as raised:
        settings.alert_webhook()

    message = str(raised.value)
    assert message.startswith("RUNRECORD_ALERT_WEBHOOK is not an http(s) URL")
    assert "secret" not in message and "\n" not in message
