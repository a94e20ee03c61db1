"""The dialect names, the only place they are compared.

`connection.dialect.name` is "sqlite", "mysql" (MariaDB reports itself as mysql through PyMySQL; `mariadb` is
the name of MariaDB's own driver dialect) or "postgresql".
"""

from __future__ import annotations

POSTGRESQL = "postgresql"
SQLITE = "sqlite"
MARIADB = frozenset({"mysql", "mariadb"})


def is_mariadb(dialect: str) -> bool:
    """MariaDB (or MySQL), whichever driver dialect name it came through."""
    return dialect in MARIADB


def is_sqlite(dialect: str) -> bool:
    """SQLite (a URL's backend name, or a connection's dialect name)."""
    return dialect == SQLITE
