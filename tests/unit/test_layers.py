"""Imports point inward: dashboard/ and jobs/ import core/; core/ imports neither (STYLE.md, 'Layers')."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CORE = REPO_ROOT / "core"
# Only the table definitions may know SQLAlchemy; the rules take and return plain values.
SCHEMA_MODULES = {"schema.py"}
FORBIDDEN_IN_CORE = {"jobs", "dashboard", "streamlit", "apscheduler", "alembic", "click", "pandas", "plotly"}
FORBIDDEN_IN_RULES = FORBIDDEN_IN_CORE | {"sqlalchemy"}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("module", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_core_imports_neither_jobs_nor_dashboard_nor_their_libraries(module: Path) -> None:
    forbidden = FORBIDDEN_IN_CORE if module.name in SCHEMA_MODULES else FORBIDDEN_IN_RULES

    assert _imported_roots(module) & forbidden == set()


def test_no_module_is_a_grab_bag_named_utils() -> None:
    assert list(REPO_ROOT.glob("*/utils*.py")) == []
