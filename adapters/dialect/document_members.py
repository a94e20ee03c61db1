"""A document's members handed over as rows, each read once: the members a reading asks about, and the items
of a list with theirs (adapters.dialect.documents reads each member)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, FromClause, String, case, func, literal, literal_column, select

from adapters.dialect.documents import Member, Path, mysql_path, pg_list
from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb
from adapters.dialect.plans import evaluated_once


@dataclass(frozen=True)
class Members:
    """A document and the members a reading asks about, each where it is cheapest to read again.

    MariaDB parses a document's text again for every JSON function asked of it: a run record entry read key
    by key was some 65 parses of the entry (0.8 s for 11,000 entries, against 0.05 s to list them, measured).
    There `array_items` and `member_table` hand the members over as fragments (each member's own JSON text,
    read by one JSON_TABLE pass over the document), and a check reads the small fragment instead; SQLite
    where a reading asks many (`fragmented`). PostgreSQL (jsonb, parsed once) reads every member from the
    document itself.
    """

    document: ColumnElement[Any]
    fragments: Mapping[tuple[str, ...], ColumnElement[Any]] = field(default_factory=dict)

    def at(self, path: Path) -> Member:
        """What to read the member at `path` from: (a document, the path left inside it)."""
        wanted = tuple(path)
        for cut in range(len(wanted), 0, -1):
            fragment = self.fragments.get(wanted[:cut])
            if fragment is not None:
                return fragment, wanted[cut:]
        return self.document, wanted


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _mariadb_columns(paths: Sequence[Path]) -> tuple[list[str], str]:
    """JSON_TABLE columns that hold each path's member as a fragment (NULL where it is missing)."""
    names, columns = [], []
    for index, path in enumerate(paths):
        if not path or not all(_KEY.fullmatch(key) for key in path):
            raise ValueError(f"a member path of plain keys only, not {path!r}")
        names.append(f"m{index}")
        columns.append(f"m{index} JSON PATH '{mysql_path(path)}'")
    return names, "".join(f", {column}" for column in columns)


def _members(
    document: ColumnElement[Any], table: Any, names: Sequence[str], paths: Sequence[Path]
) -> Members:
    return Members(document, {tuple(path): table.c[name] for name, path in zip(names, paths, strict=True)})


def member_table(
    dialect: str, document: ColumnElement[Any], paths: Sequence[Path], name: str
) -> tuple[Any, Members]:
    """The document's members at `paths`: (a table to LEFT JOIN on true, or None where the dialect reads
    them from the document itself; the Members to read them by)."""
    if not is_mariadb(dialect):
        return None, Members(document)
    names, columns = _mariadb_columns(paths)
    table = (
        func.json_table(document, literal_column(f"'$' COLUMNS (whole FOR ORDINALITY{columns})"))
        .table_valued("whole", *names)
        .alias(name)
    )
    return table, _members(document, table, names, paths)


# SQLite's `->` (from 3.38) hands a member over as its own JSON text: one parse of the document per member.
_SQLITE_MEMBER_TEXT = sqlite3.sqlite_version_info >= (3, 38, 0)


def fragmented(
    dialect: str,
    rows: FromClause,
    carried: Sequence[ColumnElement[Any]],
    members: Members,
    paths: Sequence[Path],
    name: str,
) -> tuple[FromClause, list[ColumnElement[Any]], Members]:
    """`rows` with the members at `paths` handed over as fragments, each read once, where the dialect would
    otherwise parse the document again for every reading of a member (SQLite: a run record entry read key by
    key was some 60 parses of it; the statement took 1.53 s against 1.18 s for 46,000 entries with one parse
    per member, measured); else `rows` as they are. Returns the rows to select from, the `carried` columns as
    read from them, and the Members to read by."""
    if dialect != SQLITE or not _SQLITE_MEMBER_TEXT:
        return rows, list(carried), members
    fragments = [
        members.document.op("->", return_type=String())(literal(mysql_path(path), String)).label(f"m{index}")
        for index, path in enumerate(paths)
    ]
    columns = [column.label(f"c{index}") for index, column in enumerate(carried)]
    # Evaluated once per row, so that each fragment is the one parse of its member, however often the
    # readings ask it.
    inner = evaluated_once(
        select(*columns, members.document.label("document"), *fragments).select_from(rows)
    ).subquery(name)
    read = Members(inner.c.document, {tuple(path): inner.c[f"m{index}"] for index, path in enumerate(paths)})
    return inner, [inner.c[f"c{index}"] for index in range(len(carried))], read


def array_items(
    dialect: str, doc: ColumnElement[Any], members: Sequence[Path] = ()
) -> tuple[Any, ColumnElement[Any], Members]:
    """The items of a document that is a list, as a table to join: (the table, its position from 0, the item
    as a document of its own, NULL for an item that is no object or list, with its `members`)."""
    if dialect == POSTGRESQL:
        items = (
            func.jsonb_array_elements(pg_list(doc))
            .table_valued("value", with_ordinality="ordinality")
            .render_derived("entry")
        )
        return items, items.c.ordinality - 1, Members(items.c.value)
    if dialect == SQLITE:
        items = func.json_each(doc).table_valued("value", "type", "key").alias("entry")
        return items, items.c.key, Members(case((items.c.type.in_(("object", "array")), items.c.value)))
    if is_mariadb(dialect):
        names, columns = _mariadb_columns(members)
        items = (
            func.json_table(
                doc, literal_column(f"'$[*]' COLUMNS (ord FOR ORDINALITY, item JSON PATH '$'{columns})")
            )
            .table_valued("ord", "item", *names)
            .alias("entry")
        )
        return items, items.c.ord - 1, _members(items.c.item, items, names, members)
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
