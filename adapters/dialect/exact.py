"""Text compared byte for byte, as Python compares it: MariaDB's default collations ignore case and
trailing spaces ("pages " = "Pages"), so a name judged in Python is read and matched there as binary."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, LargeBinary, cast

from adapters.dialect.names import is_mariadb


def exact(dialect: str, text: ColumnElement[Any]) -> ColumnElement[Any]:
    """The text as a value that is equal only to the same bytes (DISTINCT and IN then keep "pages " apart)."""
    return cast(text, LargeBinary) if is_mariadb(dialect) else text


def read_exact(value: str | bytes) -> str:
    """A value `exact` selected, as the text it is."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def exact_values(dialect: str, texts: Iterable[str]) -> list[Any]:
    """Texts to compare with an `exact` column: bytes on MariaDB."""
    return [text.encode("utf-8") for text in texts] if is_mariadb(dialect) else list(texts)
