"""docs/installation.md's grants on MariaDB name runrecord's tables one by one (MariaDB takes no wildcard in a
table's name): the list holds every table the migrations create, one they drop again included."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy import event

from adapters.database import make_engine, parse_url
from jobs.schema_setup import init_db
from tests.conftest import REPO_ROOT

CREATED = re.compile(r"\s*CREATE\s+TABLE\s+[\"`]?(tx_runrecord_\w+)", re.IGNORECASE)


def _granted_one_by_one() -> set[str]:
    text = (REPO_ROOT / "docs" / "installation.md").read_text(encoding="utf-8")
    loop = re.search(r"for table in (.*?); do", text, re.DOTALL)
    assert loop is not None, "docs/installation.md has no loop over runrecord's tables"
    return set(loop.group(1).replace("\\", " ").split())


def test_the_mariadb_grants_name_every_table_the_migrations_create(tmp_path: Path) -> None:
    engine = make_engine(parse_url(f"sqlite:///{tmp_path / 'installation.sqlite'}"))
    created: set[str] = set()

    def record(_connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        found = CREATED.match(statement)
        if found:
            created.add(found.group(1))

    event.listen(engine, "before_cursor_execute", record)
    init_db(engine, with_upstream=True)
    engine.dispose()

    assert "tx_runrecord_observed" in created  # created by one revision and dropped by a later one
    assert _granted_one_by_one() == created
