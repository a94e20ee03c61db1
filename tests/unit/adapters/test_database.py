"""Engines from URLs: a query argument the driver takes reaches its connect(); nothing connects here."""

from __future__ import annotations

import pytest

from adapters.database import make_engine


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
