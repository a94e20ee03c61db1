"""Imports point inward, and only adapters/ speaks SQL (DESIGN.md "Layout", STYLE.md "Layers").

core/ imports nothing of ours; adapters/ imports core/ only; jobs/ and dashboard/ import adapters/ and core/
and never each other; data/ (the builder and the generator) imports core/ and adapters/. Only adapters/,
data/ and the migrations construct SQL, and a dialect's name is compared only in adapters/dialect/.

Each rule is checked twice: on the tree, and on a snippet that breaks it, so that a checker that stopped
seeing the break fails too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

OURS = {"core", "adapters", "jobs", "dashboard", "data"}
LIBRARIES_CORE_MAY_NOT_USE = {
    "sqlalchemy",
    "streamlit",
    "apscheduler",
    "alembic",
    "click",
    "pandas",
    "plotly",
}
# What a package may import of ours.
MAY_IMPORT: dict[str, set[str]] = {
    "core": {"core"},
    "adapters": {"core", "adapters"},
    "data": {"core", "adapters", "data"},
    "jobs": {"core", "adapters", "data", "jobs"},
    "dashboard": {"core", "adapters", "dashboard"},
}
SQL_MAY_BE_BUILT_IN = ("adapters/", "data/", "jobs/migrations/")
DIALECT_NAMES_MAY_BE_COMPARED_IN = ("adapters/dialect/", "jobs/migrations/")
DIALECT_NAMES = {"sqlite", "postgresql", "mysql", "mariadb"}
# SQLAlchemy's statement and expression builders: importing one of them is building SQL.
SQL_BUILDERS = {
    "select",
    "insert",
    "update",
    "delete",
    "text",
    "literal",
    "literal_column",
    "func",
    "case",
    "and_",
    "or_",
    "not_",
    "exists",
    "union_all",
    "bindparam",
    "cast",
    "column",
    "table",
    "true",
    "false",
    "null",
    "tuple_",
    "any_",
    "over",
}
# Methods that build or run a statement on a Table, a column or a connection.
SQL_METHODS = {"exec_driver_sql", "where", "order_by", "group_by", "returning", "on_conflict_do_nothing"}


def _sources() -> Iterator[tuple[str, str]]:
    for package in sorted(OURS):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            yield path.relative_to(REPO_ROOT).as_posix(), path.read_text(encoding="utf-8")


SOURCES = dict(_sources())


def imported_roots(source: str) -> set[str]:
    """Every top-level package an import statement of the source names (absolute imports only)."""
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def sql_built(source: str) -> set[str]:
    """The SQL builders the source imports from SQLAlchemy and the statement methods it calls."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sqlalchemy":
            found |= {alias.name for alias in node.names} & SQL_BUILDERS
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_METHODS
        ):
            found.add(f".{node.func.attr}()")
    return found


def dialect_names_compared(source: str) -> set[str]:
    """The dialect names the source compares something with (==, !=, in, not in)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                for constant in ast.walk(operand):
                    if isinstance(constant, ast.Constant) and constant.value in DIALECT_NAMES:
                        found.add(str(constant.value))
    return found


def _package(path: str) -> str:
    return path.split("/")[0]


@pytest.mark.parametrize("path", sorted(SOURCES), ids=str)
def test_a_module_imports_only_the_packages_its_layer_may_import(path: str) -> None:
    ours = imported_roots(SOURCES[path]) & OURS

    assert ours <= MAY_IMPORT[_package(path)]


@pytest.mark.parametrize("path", sorted(p for p in SOURCES if p.startswith("core/")), ids=str)
def test_core_imports_no_database_scheduler_or_page_library(path: str) -> None:
    assert imported_roots(SOURCES[path]) & LIBRARIES_CORE_MAY_NOT_USE == set()


@pytest.mark.parametrize("path", sorted(p for p in SOURCES if not p.startswith(SQL_MAY_BE_BUILT_IN)), ids=str)
def test_only_adapters_data_and_the_migrations_build_sql(path: str) -> None:
    assert sql_built(SOURCES[path]) == set()


@pytest.mark.parametrize(
    "path", sorted(p for p in SOURCES if not p.startswith(DIALECT_NAMES_MAY_BE_COMPARED_IN)), ids=str
)
def test_a_dialect_name_is_compared_only_in_adapters_dialect(path: str) -> None:
    assert dialect_names_compared(SOURCES[path]) == set()


def test_no_module_is_a_grab_bag_named_utils() -> None:
    assert [path for path in SOURCES if Path(path).stem.startswith("utils")] == []


# --- the checkers see what they must ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("package", "source"),
    [
        ("core", "from adapters import schema"),
        ("core", "import jobs.derive"),
        ("adapters", "from jobs.job_log import JobResult"),
        ("adapters", "from dashboard import state"),
        ("dashboard", "from jobs.releases import compare_at"),
        ("dashboard", "import jobs"),
        ("jobs", "import dashboard"),
        ("jobs", "from dashboard.queries import rates"),
        ("data", "from jobs.schema_setup import init_db"),
    ],
)
def test_a_forbidden_import_is_seen(package: str, source: str) -> None:
    ours = imported_roots(source) & OURS

    assert not ours <= MAY_IMPORT[package]


@pytest.mark.parametrize(
    "source",
    [
        "from sqlalchemy import select",
        "from sqlalchemy import Engine, text",
        "from sqlalchemy.sql import func",
        "connection.exec_driver_sql('SELECT 1')",
        "query = table.select().where(table.c.uid == 1)",
    ],
)
def test_sql_built_outside_adapters_is_seen(source: str) -> None:
    assert sql_built(source) != set()


@pytest.mark.parametrize(
    "source",
    [
        "if connection.dialect.name == 'sqlite': pass",
        "x = name in ('mysql', 'mariadb')",
        "y = 'postgresql' != dialect",
    ],
)
def test_a_dialect_comparison_is_seen(source: str) -> None:
    assert dialect_names_compared(source) != set()
