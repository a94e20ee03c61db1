"""Imports point inward, and only adapters/ speaks SQL (DESIGN.md "Layout", STYLE.md "Layers").

core/ imports nothing of ours; adapters/ imports core/ only; jobs/ and dashboard/ import adapters/ and core/
and never each other; data/ (the builder and the generator) imports core/ and adapters/. No module of ours
imports itself through others (an import cycle). Only adapters/, data/ and the migrations construct SQL, and a
dialect's name is compared only in adapters/dialect/.

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


def module_name(path: str) -> str:
    """The dotted name of a source file: adapters/measure_batch/__init__.py is adapters.measure_batch."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The import statements inside `if TYPE_CHECKING:`, which never run."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped |= set(ast.walk(inner))
    return skipped


def imported_modules(source: str, modules: set[str]) -> set[str]:
    """The modules of ours an import statement of the source names, wherever it stands (inside a function
    too), but not under `if TYPE_CHECKING:`; `from a import b` names a.b when that is a module, else a."""
    tree = ast.parse(source)
    skipped = _type_checking_only(tree)
    found = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                named = f"{node.module}.{alias.name}"
                found.add(named if named in modules else node.module)
    return found & modules


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (or of one that imports itself), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iterative: a deep chain of imports must not hit the recursion limit.
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph.get(node, ()):
                    groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(groups)


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


def test_no_module_imports_itself_through_others() -> None:
    modules = {module_name(path) for path in SOURCES}
    graph = {module_name(path): imported_modules(source, modules) for path, source in SOURCES.items()}

    assert import_cycles(graph) == []


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


def test_an_import_cycle_is_seen_through_a_function_level_import_but_not_through_type_checking() -> None:
    modules = {"data.builder", "data.chat", "data.rows"}
    builder = "from data.rows import Row\ndef conversation():\n    from data.chat import Conversation\n"
    chat = "from data import builder\n"
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from data.builder import Installation\n"

    graph = {"data.builder": imported_modules(builder, modules), "data.chat": imported_modules(chat, modules)}
    typed_graph = graph | {"data.chat": imported_modules(typed, modules)}

    assert import_cycles(graph) == [["data.builder", "data.chat"]]
    assert import_cycles(typed_graph) == []
