"""Two roles: the product team sees Rates and Runs, administrators everything. With OIDC configured everyone
signs in and administrators are the configured addresses; without it the administrator password is asked for,
checked against its stored hash, and the sign-in is a signed, expiring token the browser keeps in a cookie.
A link to an administrator page shows the sign-in in its place, and that very page once signed in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from streamlit.testing.v1 import AppTest

from adapters import admin_sessions
from adapters.passwords import MIN_ITERATIONS, hash_password
from dashboard.access import SIGNED_IN_KEY, TOKEN_COOKIE, issue_token
from dashboard.components import browser_cookie
from dashboard.components.sign_in_gate import RETURN_COOKIE, RETURN_MAX_AGE_S
from tests.app import rendered
from tests.app.conftest import APP, NOW, TIMEOUT_S

PASSWORD = "correct horse battery staple"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "not-a-secret-for-tests",
    "client_id": "runrecord",
    "client_secret": "not-a-secret-for-tests",
    "server_metadata_url": "https://login.example.org/.well-known/openid-configuration",
}
ADMIN_PAGES = ("conversations", "conversation", "health")
CONVERSATION_1 = "Starte den SEO-Check für diese Seite."  # conversation 1's first message


@dataclass
class Browser:
    """The browser's cookies as the dashboard sees them: those it sent when the tab connected, and what the
    dashboard asked it to keep (name, value or None for removed, max age)."""

    cookies: dict[str, str] = field(default_factory=dict)
    kept: list[tuple[str, str | None, int]] = field(default_factory=list)

    def sent(self, name: str) -> str | None:
        return self.cookies.get(name)

    def show(self, name: str, value: str | None, *, max_age_s: int, key: str) -> None:
        self.kept.append((name, value, max_age_s))

    def last(self, name: str) -> tuple[str | None, int] | None:
        return next(((value, age) for kept, value, age in reversed(self.kept) if kept == name), None)


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Browser]:
    """A browser of our own in place of the component that reads and writes the dashboard's cookies."""
    fake = Browser()
    monkeypatch.setattr(browser_cookie, "sent", fake.sent)
    monkeypatch.setattr(browser_cookie, "show", fake.show)
    yield fake


def _registered(app: AppTest, page: str) -> bool:
    try:
        app.switch_page(f"views/{page}.py")
    except ValueError:
        return False
    return True


@pytest.fixture
def app_on(monkeypatch: pytest.MonkeyPatch, use_db: None, browser: Browser) -> Callable[[str], AppTest]:
    def make(url: str) -> AppTest:
        monkeypatch.setenv("RUNRECORD_DB", url)
        return AppTest.from_file(APP, default_timeout=TIMEOUT_S)

    return make


@pytest.fixture
def password_hash(monkeypatch: pytest.MonkeyPatch) -> str:
    stored = hash_password(PASSWORD, iterations=MIN_ITERATIONS)
    monkeypatch.setenv("RUNRECORD_ADMIN_PASSWORD_HASH", stored)
    return stored


def _visit(app: AppTest, page: str, query: dict[str, str] | None = None) -> AppTest:
    """Open a page the way a link does: its path and its query parameters."""
    app.run()
    app.query_params.update(query or {})
    return app.switch_page(f"views/{page}.py").run()


def _submit(app: AppTest, password: str) -> AppTest:
    app.text_input(key="password_password").input(password)
    app.get("form_submit_button")[0].click().run()
    return app


def _sign_in(app: AppTest, password: str) -> AppTest:
    app.switch_page("views/sign_in.py").run()
    return _submit(app, password)


def _shows_none_of_the_administrator_pages(app: AppTest) -> bool:
    shown = rendered.text(app)
    page_texts = (CONVERSATION_1, "Conversation uid", "Newest conversations", "Pending derivations", "Jobs")
    return [t.value for t in app.title] == ["Sign in"] and not any(text in shown for text in page_texts)


@pytest.mark.parametrize(
    ("page", "query"),
    [("conversation", {"conversation": "1"}), ("conversation", {}), ("conversations", {}), ("health", {})],
)
def test_a_signed_out_visitor_of_an_administrator_page_sees_the_sign_in_and_none_of_the_page(
    app_on: Callable[[str], AppTest],
    measured_db_url: str,
    password_hash: str,
    page: str,
    query: dict[str, str],
) -> None:
    app = _visit(app_on(measured_db_url), page, query)

    assert not app.exception
    assert _shows_none_of_the_administrator_pages(app)
    assert app.text_input(key="password_password").label == "Administrator password"
    assert rendered.tables(app) == []


def test_after_signing_in_on_an_administrator_page_that_page_shows_with_its_parameters(
    app_on: Callable[[str], AppTest], measured_db_url: str, password_hash: str
) -> None:
    app = _visit(app_on(measured_db_url), "conversation", {"conversation": "1"})

    _submit(app, PASSWORD)

    assert not app.exception
    assert [t.value for t in app.title] == ["Conversation"]
    assert app.query_params["conversation"] == "1"
    assert CONVERSATION_1 in rendered.text(app)


def test_after_signing_in_on_the_sign_in_page_it_is_headed_signed_in_not_sign_in(
    app_on: Callable[[str], AppTest], measured_db_url: str, password_hash: str
) -> None:
    app = _sign_in(app_on(measured_db_url).run(), PASSWORD)

    assert not app.exception
    assert [t.value for t in app.title] == ["Signed in"]
    assert [s.value for s in app.success] == ["You are signed in as an administrator."]


def test_the_product_team_gets_rates_and_runs_and_the_sign_in_for_an_administrator_page(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url).run()

    assert [title.value for title in app.title] == ["Rates"]
    assert _registered(app, "runs") and _registered(app, "run")
    for page in ADMIN_PAGES:
        assert _shows_none_of_the_administrator_pages(_visit(app, page))


def test_the_right_password_gives_the_tab_a_token_the_browser_keeps_for_the_configured_minutes(
    app_on: Callable[[str], AppTest],
    measured_db_url: str,
    password_hash: str,
    browser: Browser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNRECORD_ADMIN_SESSION_MINUTES", "5")
    app = app_on(measured_db_url).run()

    _sign_in(app, PASSWORD)

    token = app.session_state[SIGNED_IN_KEY]
    parsed = admin_sessions.read(token)
    assert parsed is not None and 0 < parsed.expiry - NOW.timestamp() <= 300
    kept = browser.last(TOKEN_COOKIE)
    assert kept is not None and kept[0] == token and 290 <= kept[1] <= 300
    assert PASSWORD not in token and password_hash not in token
    assert [t.value for t in _visit(app, "health").title] == ["Health"]


def test_the_token_the_browser_sent_signs_a_new_tab_in(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser
) -> None:
    browser.cookies[TOKEN_COOKIE] = issue_token()

    app = _visit(app_on(measured_db_url), "conversation", {"conversation": "1"})

    assert [t.value for t in app.title] == ["Conversation"]
    assert CONVERSATION_1 in rendered.text(app)


def _forged() -> str:
    return admin_sessions.issue(b"x" * 32, now=int(NOW.timestamp()), lifetime_s=3600)


def _expired() -> str:
    return admin_sessions.issue(admin_sessions.key(None), now=int(NOW.timestamp()) - 7200, lifetime_s=3600)


def _signed_out() -> str:
    token = issue_token()
    parsed = admin_sessions.read(token)
    assert parsed is not None
    admin_sessions.SIGNED_OUT.add(parsed, now=int(NOW.timestamp()))
    return token


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(_forged, id="signed with another key"),
        pytest.param(_expired, id="expired"),
        pytest.param(_signed_out, id="of a session signed out"),
        pytest.param(lambda: "true", id="no token"),
    ],
)
def test_a_forged_expired_or_signed_out_token_is_refused_and_the_browser_drops_it(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser, token: Callable[[], str]
) -> None:
    browser.cookies[TOKEN_COOKIE] = token()

    app = _visit(app_on(measured_db_url), "conversation", {"conversation": "1"})

    assert _shows_none_of_the_administrator_pages(app)
    assert SIGNED_IN_KEY not in app.session_state
    assert browser.last(TOKEN_COOKIE) == (None, 0)


def test_an_expired_sign_in_says_so_beside_the_form(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser
) -> None:
    browser.cookies[TOKEN_COOKIE] = _expired()

    app = _visit(app_on(measured_db_url), "health")

    assert [i.value for i in app.info] == ["Your administrator sign-in has ended. Sign in again to go on."]


def test_a_wrong_password_signs_no_one_in(
    app_on: Callable[[str], AppTest], measured_db_url: str, password_hash: str, browser: Browser
) -> None:
    app = app_on(measured_db_url).run()

    _sign_in(app, "wrong")

    assert any("not the administrator password" in e.value for e in app.error)
    assert SIGNED_IN_KEY not in app.session_state
    assert browser.last(TOKEN_COOKIE) is None
    assert _shows_none_of_the_administrator_pages(_visit(app, "conversation"))


def test_without_a_configured_hash_no_password_signs_in(
    app_on: Callable[[str], AppTest], measured_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNRECORD_ADMIN_PASSWORD_HASH", raising=False)
    app = app_on(measured_db_url).run()

    _sign_in(app, "")

    assert any("no administrator password is configured" in e.value for e in app.error)
    assert _shows_none_of_the_administrator_pages(_visit(app, "conversation"))


def test_signing_out_ends_the_session_in_every_tab_and_the_browser_drops_the_token(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser
) -> None:
    token = issue_token()
    first = app_on(measured_db_url)
    first.session_state[SIGNED_IN_KEY] = token
    first.run()
    browser.cookies[TOKEN_COOKIE] = token
    second = _visit(app_on(measured_db_url), "health")
    assert [t.value for t in second.title] == ["Health"]

    first.button(key="account").click().run()

    assert SIGNED_IN_KEY not in first.session_state
    assert browser.last(TOKEN_COOKIE) == (None, 0)
    assert _shows_none_of_the_administrator_pages(_visit(first, "health"))
    assert _shows_none_of_the_administrator_pages(second.run())


def test_a_malformed_session_setting_is_one_error_line_and_signs_no_one_in(
    app_on: Callable[[str], AppTest],
    measured_db_url: str,
    password_hash: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNRECORD_ADMIN_SESSION_MINUTES", "forever")

    app = _visit(app_on(measured_db_url), "conversation")

    assert not app.exception
    assert [e.value for e in app.error] == [
        "A setting is malformed: RUNRECORD_ADMIN_SESSION_MINUTES='forever' is not a whole number of minutes, "
        "from 1 to 10080. Correct it and start the dashboard again."
    ]
    assert not app.get("form_submit_button") and _shows_none_of_the_administrator_pages(app)


def test_with_oidc_configured_everyone_signs_in_first(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url)
    app.secrets = {"auth": AUTH}
    app.user = {}

    app.run()

    assert [title.value for title in app.title] == ["Sign in"]
    assert [button.label for button in app.button] == ["Sign in with the identity provider"]
    assert "EDITED and nothingSaved over time" not in rendered.text(app)


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
    rates = [title.value for title in app.title]
    health = _visit(app, "health")

    assert rates == ["Rates"]
    assert ([t.value for t in health.title] == ["Health"]) is administrator
    assert not health.get("text_input")  # with OIDC there is no password to give


def test_with_oidc_a_signed_out_visitor_of_a_page_signs_in_there_and_the_page_is_kept_for_the_return(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser
) -> None:
    app = app_on(measured_db_url)
    app.secrets = {"auth": AUTH}
    app.user = {}

    _visit(app, "conversation", {"conversation": "1", "utm": "x"})

    assert _shows_none_of_the_administrator_pages(app)
    assert [button.label for button in app.button] == ["Sign in with the identity provider"]
    assert browser.last(RETURN_COOKIE) == ("conversation?conversation=1", RETURN_MAX_AGE_S)


def test_with_oidc_the_login_comes_back_to_the_page_it_was_asked_for_with_its_parameters(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNRECORD_ADMIN_EMAILS", "admin@example.org")
    browser.cookies[RETURN_COOKIE] = "conversation?conversation=1"
    app = app_on(measured_db_url)
    app.secrets = {"auth": AUTH}
    app.user = {"is_logged_in": True, "email": "admin@example.org"}

    app.run()

    assert [t.value for t in app.title] == ["Conversation"]
    assert app.query_params["conversation"] == "1"
    assert CONVERSATION_1 in rendered.text(app)
    assert browser.last(RETURN_COOKIE) == (None, 0)


@pytest.mark.parametrize(
    "kept",
    ["https://elsewhere.example/", "sign-in", "conversation?conversation=1&token=x", "../health", "nowhere"],
)
def test_with_oidc_a_kept_page_that_is_none_of_ours_is_not_followed(
    app_on: Callable[[str], AppTest], measured_db_url: str, browser: Browser, kept: str
) -> None:
    browser.cookies[RETURN_COOKIE] = kept
    app = app_on(measured_db_url)
    app.secrets = {"auth": AUTH}
    app.user = {"is_logged_in": True, "email": "product@example.org"}

    app.run()

    assert [t.value for t in app.title] == ["Rates"]
    assert browser.last(RETURN_COOKIE) == (None, 0)


def test_an_administrator_page_whose_tab_lost_the_role_shows_the_sign_in_instead(
    app_on: Callable[[str], AppTest], measured_db_url: str
) -> None:
    app = app_on(measured_db_url)
    app.session_state[SIGNED_IN_KEY] = issue_token()
    app.run()
    app.switch_page("views/health.py")
    del app.session_state[SIGNED_IN_KEY]

    app.run()

    assert _shows_none_of_the_administrator_pages(app)


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
