"""The column shapes TYPO3's tables and ours share: integer and string columns that are never NULL and
have a server default, TYPO3's mediumtext, an 8-byte float, and the uid primary key."""

from __future__ import annotations

from sqlalchemy import Column, Float, Integer, String, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.types import TypeEngine


def medium_text() -> TypeEngine[str]:
    """TYPO3's mediumtext: TEXT elsewhere, MEDIUMTEXT on MariaDB/MySQL (TEXT stops at 64 KiB there)."""
    return Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def integer(name: str, default: int = 0) -> Column[int]:
    return Column(name, Integer, nullable=False, server_default=str(default))


def string(name: str, length: int, default: str = "") -> Column[str]:
    return Column(name, String(length), nullable=False, server_default=default)


def double(name: str) -> Column[float]:
    """An 8-byte float: DOUBLE PRECISION on PostgreSQL, DOUBLE on MariaDB (which reflects it so)."""
    return Column(name, Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), nullable=False)


def uid_column() -> Column[int]:
    return Column("uid", Integer, primary_key=True, autoincrement=True)
