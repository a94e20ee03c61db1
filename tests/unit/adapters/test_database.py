"""Engines from URLs: a query argument the driver takes reaches its connect(), a URL in a message hides its
secrets; nothing connects here."""

from __future__ import annotations

import pytest

from adapters.database import RunrecordError, describe, make_engine, parse_url


@pytest.mark.parametrize(
    ("url", "passed"),
    [
        ("mysql+pymysql://root@127.0.0.1:1/test?charset=utf8mb4", {"charset": "utf8mb4"}),
        ("postgresql+psycopg://postgres@127.0.0.1:1/test?sslmode=disable", {"sslmode": "disable"}),
    ],
    ids=["mariadb", "postgresql"],
)
def test_a_query_argument_the_driver_takes_is_passed_on_to_it(url: str, passed: dict[str, str]) -> None:
    engine = make_engine(url)

    _arguments, keywords = engine.dialect.create_connect_args(engine.url)
    assert passed.items() <= keywords.items()
    engine.dispose()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql+psycopg://editor:Secret1@db/typo3", "postgresql+psycopg://editor:***@db/typo3"),
        (
            "mysql+pymysql://root@db/typo3?ssl_key=/k.pem&ssl_key_password=Secret1",
            "mysql+pymysql://root@db/typo3?ssl_key=***&ssl_key_password=***",
        ),
        (
            "postgresql+psycopg://editor@db/typo3?password=Secret1",
            "postgresql+psycopg://editor@db/typo3?password=***",
        ),
        ("sqlite:///data/demo.sqlite", "sqlite:///data/demo.sqlite"),
    ],
    ids=["password", "query", "password in the query", "no secret"],
)
def test_a_url_in_a_message_shows_neither_its_password_nor_a_query_arguments_value(
    url: str, shown: str
) -> None:
    assert describe(url) == shown


def test_a_url_that_cannot_be_read_is_shown_without_its_password_and_query_values() -> None:
    with pytest.raises(RunrecordError) as refused:
        parse_url("postgresql+psycopg://editor:Se@cret1@db:notaport/typo3?sslpassword=Secret2")

    assert str(refused.value) == (
        "not a database URL: 'postgresql+psycopg://editor:***@db:notaport/typo3?sslpassword=***'"
    )
