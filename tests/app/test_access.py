"""Two roles: the product team sees Rates and Runs, administrators everything. With OIDC configured everyone
signs in and administrators are the configured addresses; without it the administrator password is asked for,
checked against its stored hash."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from adapters.passwords import MIN_ITERATIONS, hash_password
from dashboard.access import SIGNED_IN_KEY
from tests.app.conftest import APP, TIMEOUT_S

PASSWORD = "correct horse battery staple"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "not-a-secret-for-tests",
    "client_id": "runrecord",
    "client_secret": "not-a-secret-for-tests",
    "server_metadata_url": "https://login.example.org/.well-known/openid-configuration",
}
ADMIN_PAGES = ("conversation", "health")


def _registered(app: AppTest, page: str) -> bool:
    try:
        app.switch_page(f"views/{page}.py")
    except ValueError:
        return False
    return True


@pytest.fixture
def app_on(monkeypatch: pytest.MonkeyPatch, use_db: None) -> Callable[[str], AppTest]:
    def make(url: str) -> AppTest:
        monkeypatch.setenv("RUNRECORD_DB", url)
        return AppTest.from_file(APP, default_timeout=TIMEOUT_S)

    return make


@pytest.fixture
def password_hash(monkeypatch: pytest.MonkeyPatch) -> str:
    stored = hash_password(PASSWORD, iterations=MIN_ITERATIONS)
    monkeypatch.setenv("RUNRECORD_ADMIN_PASSWORD_HASH", stored)
    return stored


def _sign_in(app: AppTest, password: str) -> AppTest:
    app.switch_page("views/sign_in.py").run()
    app.text_input(key="password_password").input(password)
    return app.button[0].click().run() if not app.get("form_submit_button") else _submit(app)


def _submit(app: AppTest) -> AppTest:
    app.get("form_submit_button")[0].click().run()
    return app


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_the_product_team_gets_rates_and_runs_and_no_administrator_page(
    app_on: Callable[[str], AppTest], measured_db_url: str, page: str
) -> None:
    app = app_on(measured_db_url).run()

    assert [title.value for title in app.title] == ["Rates"]
    assert _registered(app, "runs") and _registered(app, "run")
    assert not _registered(app, page)


def test_the_right_password_signs_an_administrator_in_for_the_session(
    app_on: Callable[[str], AppTest], measured_db_url: str, password_hash: str
) -> None:
    app = app_on(measured_db_url).run()

    _sign_in(app, PASSWORD)

    assert app.session_state[SIGNED_IN_KEY] is True
    assert all(_registered(app, page) for page in ADMIN_PAGES)


def test_a_wrong_password_signs_no_one_in(
    app_on: Callable[[str], AppTest], measured_db_url: str, password_hash: str
) -> None:
    app = app_on(measured_db_url).run()

    _sign_in(app, "wrong")

    assert any("not the administrator password" in e.value for e in app.error)
    assert SIGNED_IN_KEY not in app.session_state
    assert not _registered(app, "conversation")


def test_without_a_configured_hash_no_password_signs_in(
    app_on: Callable[[str], AppTest], measured_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNRECORD_ADMIN_PASSWORD_HASH", raising=False)
    app = app_on(measured_db_url).run()

    _sign_in(app, "")

    assert any("no administrator password is configured" in e.value for e in app.error)
    assert not _registered(app, "conversation")


def test_a_signed_in_administrator_can_sign_out(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url)
    app.session_state[SIGNED_IN_KEY] = True
    app.run()

    app.button(key="account").click().run()

    assert SIGNED_IN_KEY not in app.session_state
    assert not _registered(app, "health")


def test_with_oidc_configured_everyone_signs_in_first(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url)
    app.secrets = {"auth": AUTH}
    app.user = {}

    app.run()

    assert [title.value for title in app.title] == ["Sign in"]
    assert [button.label for button in app.button] == ["Sign in with the identity provider"]
    assert not _registered(app, "rates")


@pytest.mark.parametrize(
    ("email", "administrator"),
    [("Admin@Example.org", True), ("product@example.org", False), ("", False)],
)
def test_with_oidc_the_configured_addresses_are_the_administrators(
    app_on: Callable[[str], AppTest],
    measured_db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    email: str,
    administrator: bool,
) -> None:
    monkeypatch.setenv("RUNRECORD_ADMIN_EMAILS", "ops@example.org, admin@example.org")
    app = app_on(measured_db_url)
    app.secrets = {"auth": AUTH}
    app.user = {"is_logged_in": True, "email": email}

    app.run()

    assert [title.value for title in app.title] == ["Rates"]
    assert _registered(app, "health") is administrator
    assert not _registered(app, "sign_in")  # with OIDC there is no password to give


def test_an_administrator_page_reached_without_the_role_refuses_to_render(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url)
    app.session_state[SIGNED_IN_KEY] = True
    app.run()
    app.switch_page("views/health.py")
    del app.session_state[SIGNED_IN_KEY]

    app.run()

    assert [title.value for title in app.title] != ["Health"] or any(
        "for administrators" in e.value for e in app.error
    )


def test_with_named_oidc_providers_there_is_a_sign_in_button_for_each(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url)
    shared = {key: AUTH[key] for key in ("redirect_uri", "cookie_secret")}
    provider = {key: AUTH[key] for key in ("client_id", "client_secret", "server_metadata_url")}
    app.secrets = {"auth": {**shared, "google": provider, "microsoft": provider}}
    app.user = {}

    app.run()

    assert [button.label for button in app.button] == ["Sign in with google", "Sign in with microsoft"]
