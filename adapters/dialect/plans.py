"""Plans that do not depend on statistics (installations rarely run ANALYZE): fences and a batch's keys.

* `fenced`: keep PostgreSQL from inlining a subquery (OFFSET 0).
* a batch's keys in one parameter (SQLite `json_each`, PostgreSQL an array; MariaDB an IN list), looked up
  one index probe per key on PostgreSQL (`each_key`): `for_values`, `for_records`.
* `outer_probe`: a LEFT JOIN that stays a primary-key probe per row on PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Delete,
    FromClause,
    Integer,
    Join,
    Select,
    String,
    Table,
    and_,
    any_,
    bindparam,
    cast,
    delete,
    func,
    literal_column,
    or_,
    select,
    true,
)
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.selectable import NamedFromClause, TableValuedAlias
from sqlalchemy.types import TypeEngine

from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb


def fenced(dialect: str, query: Select[Any]) -> Select[Any]:
    """Keep PostgreSQL from inlining or flattening a subquery (OFFSET 0, its documented way to stop that).

    A parsed document is then computed once per row: the planner would otherwise copy the
    `tx_runrecord_jsonb(...)` call into every place that reads the column. A correlated probe stays a probe
    of its index for each outer row: unfenced, and without statistics, the planner may hash the whole table
    instead. The other dialects need no fence (their document is the text itself), and a LIMIT would make
    MariaDB materialise the subquery.
    """
    return query.offset(0) if dialect == POSTGRESQL else query


def evaluated_once(query: Select[Any]) -> Select[Any]:
    """A subquery whose columns every dialect computes once per row: with OFFSET 0 none merges it into the
    query around it (SQLite does not flatten a subquery with an OFFSET, PostgreSQL fences it, MariaDB
    materialises a derived table with a LIMIT), so a column read several times there is not computed again
    for each reading."""
    return query.offset(0)


def in_values(dialect: str, column: ColumnElement[Any], values: Iterable[Any]) -> ColumnElement[bool]:
    """`column IN (values)`, with the values bound as ONE parameter where the dialect can.

    SQLite: `IN (SELECT value FROM json_each(:json))`, a list subquery its planner drives the column's index
    with; MariaDB: an expanded IN list (PyMySQL interpolates it cheaply and the range optimizer reads it as
    index lookups); PostgreSQL: `= ANY(:array)`, which its planner, without statistics, may answer with a scan
    of every row: a lookup that must stay one index probe per key uses `each_key` there instead.
    """
    ordered = sorted(set(values))
    if dialect == SQLITE:
        each = func.json_each(bindparam(None, json.dumps(ordered), type_=String)).table_valued("value")
        return column.in_(select(each.c.value))
    if dialect == POSTGRESQL:
        return column == any_(_pg_array(None, column.type, ordered))
    if is_mariadb(dialect):
        return column.in_(ordered)
    raise NotImplementedError(f"no IN list for the {dialect} dialect")


def key_table(name: str, keys: Mapping[str, tuple[TypeEngine[Any], Sequence[Any]]]) -> TableValuedAlias:
    """PostgreSQL: the keys as a table, `unnest(:a, :b, …) AS name(a, b, …)`: an array parameter a column."""
    arrays = [_pg_array(f"{name}_{column}", kind, values) for column, (kind, values) in keys.items()]
    return func.unnest(*arrays).table_valued(*keys).render_derived(name=name)


def _pg_array(name: str | None, kind: TypeEngine[Any], values: Sequence[Any]) -> ColumnElement[Any]:
    """An array parameter, bound as the text of a PostgreSQL array literal and cast to `kind`[] in SQL.

    psycopg adapts a Python list element by element in Python, a regular expression per text (1.3 ms for
    2,000 integers, 3.7 ms for 2,000 uuids, measured); the literal is built in a few string joins and parsed
    by the server in C (0.4 ms and 1.1 ms).
    """
    return cast(bindparam(name, array_literal(values), type_=String), pg.ARRAY(_unsized(kind)))


def array_literal(values: Iterable[Any]) -> str:
    """The text of a PostgreSQL array literal of integers, texts and NULLs: `{1,NULL}`, `{"a","b\\"c"}`.

    Integers are written as digits; texts in double quotes with any double quote or backslash escaped by a
    backslash, which is all the array syntax asks (any other character, braces and commas too, is literal
    inside the quotes); None is NULL. Any other type is refused rather than guessed at.
    """
    values = list(values)
    kinds = set(map(type, values))
    # The common cases in a few joins: uids and counts (some NULL), texts without a quote or backslash.
    if kinds <= {int}:
        return "{" + ",".join(map(str, values)) + "}"
    if kinds <= {int, type(None)}:
        return "{" + ",".join("NULL" if value is None else str(value) for value in values) + "}"
    if kinds <= {str}:
        text = "".join(values)
        if "\\" not in text and '"' not in text:
            return '{"' + '","'.join(values) + '"}'
    parts = []
    for value in values:
        if value is None:
            parts.append("NULL")
        elif isinstance(value, str):
            parts.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif isinstance(value, int) and not isinstance(value, bool):
            parts.append(str(value))
        else:
            raise TypeError(f"no array literal for a {type(value).__name__}")
    return "{" + ",".join(parts) + "}"


def each_key(keys: TableValuedAlias, lookup: Select[Any], name: str) -> Select[Any]:
    """PostgreSQL: the rows `lookup` finds for each row of `keys`, one index probe per key.

    `lookup` is correlated to `keys` (its WHERE compares indexed columns with theirs). It runs as a LATERAL
    subquery fenced with OFFSET 0, which the planner cannot merge into a join: without the fence, and without
    statistics, it may hash-join a scan of the whole table instead (measured: 1.5 s against 12 ms for the
    sys_history of 1,500 records among 2,000,000 rows). The fence also computes each column once per row.
    """
    found = lookup.offset(0).lateral(name)
    return select(*found.c).select_from(keys).join(found, true())


def _unsized(kind: TypeEngine[Any]) -> TypeEngine[Any]:
    # VARCHAR(n)[] would truncate a longer text in the cast; VARCHAR[] leaves the column to refuse it, as a
    # plain INSERT does.
    return String() if isinstance(kind, String) else kind


# The condition a lookup is built with: column(s) of the looked-up table equal to one of the keys.
Match = Callable[[ColumnElement[Any]], ColumnElement[bool]]
RecordMatch = Callable[[ColumnElement[str], ColumnElement[int]], ColumnElement[bool]]


def for_values(
    dialect: str,
    kind: TypeEngine[Any],
    values: Collection[Any],
    lookup: Callable[[Match], Select[Any]],
    name: str,
    *,
    skewed: bool = False,
) -> Select[Any]:
    """`lookup` for every one of the values, each an index lookup on every dialect.

    PostgreSQL: the values as one array parameter, each looked up by a LATERAL subquery (`each_key`);
    SQLite and MariaDB: `column IN (…)` bound as `in_values` binds it.

    `skewed`: a few values of a column where one value may cover nearly every row (a run's status). A
    LATERAL lookup is planned once for any value, from the column's average: with statistics in which every
    run had completed, PostgreSQL read the whole table for each value (4 x 33,611 runs a night, measured).
    There the values are written into the statement, `column IN ('a', …)`, and planned from each value's own
    frequency.
    """
    if dialect == POSTGRESQL and skewed:
        listed: BindParameter[Any] = bindparam(
            f"{name}_values", sorted(set(values)), expanding=True, literal_execute=True
        )
        return lookup(lambda column: column.in_(listed))
    if dialect == POSTGRESQL:
        keys = key_table(f"{name}_key", {"value": (kind, sorted(set(values)))})
        return each_key(keys, lookup(lambda column: column == keys.c.value), name)
    return lookup(lambda column: in_values(dialect, column, values))


def for_records(
    dialect: str,
    records: Mapping[str, Collection[int]],
    lookup: Callable[[RecordMatch], Select[Any]],
    name: str,
) -> Select[Any]:
    """`lookup` for every record (tablename, uid), each an index lookup on (tablename, uid).

    PostgreSQL: two array parameters, the records looked up one by one (`each_key`); SQLite and MariaDB:
    (tablename = T1 AND uid IN (…)) OR (tablename = T2 AND uid IN (…)).
    """
    if dialect == POSTGRESQL:
        pairs = sorted((table, uid) for table, uids in records.items() for uid in set(uids))
        keys = key_table(
            f"{name}_key",
            {"tablename": (String(), [t for t, _ in pairs]), "recuid": (Integer(), [u for _, u in pairs])},
        )
        return each_key(
            keys, lookup(lambda names, uids: and_(names == keys.c.tablename, uids == keys.c.recuid)), name
        )

    def per_table(names: ColumnElement[str], uids: ColumnElement[int]) -> ColumnElement[bool]:
        return or_(
            *(
                and_(names == table, in_values(dialect, uids, wanted))
                for table, wanted in sorted(records.items())
                if wanted
            )
        )

    return lookup(per_table)


def by_index(dialect: str, query: Select[Any], table: FromClause, index: str) -> Select[Any]:
    """Read `table` through `index` in the query on MariaDB (FORCE INDEX), whatever its statistics say.

    Right after a bulk load InnoDB may still count a table as nearly empty, and then reads sys_history whole
    for each record of a batch: 11 s instead of 20 ms for 2,000 records (measured). The index name is ours
    or the installation's documented one, never a payload's."""
    if not is_mariadb(dialect):
        return query
    hint = f"FORCE INDEX ({index})"
    return query.with_hint(table, hint, dialect_name="mysql").with_hint(table, hint, dialect_name="mariadb")


def in_order(dialect: str, query: Select[Any]) -> Select[Any]:
    """Join the query's tables in the order its FROM names them (MariaDB's STRAIGHT_JOIN): a batch table
    first, the installation's table looked up by index for each of its rows, whatever the statistics say."""
    return query.prefix_with("STRAIGHT_JOIN") if is_mariadb(dialect) else query


def recomputes_window_max(dialect: str) -> bool:
    """Whether the dialect computes MAX over a window frame afresh for every row, so that a running maximum
    over a partition of n rows costs n²/2 steps: MariaDB (one partition of 5,000 rows 0.3 s, 10,000 rows
    1.2 s, 40,000 rows 18.8 s, against 0.02 s for SUM over the same frame; MAX over the whole partition
    without an order as slow, measured). A running maximum there is taken in blocks of rows; SQLite and
    PostgreSQL carry it along the frame."""
    return is_mariadb(dialect)


def seeks_last_per_row(dialect: str) -> bool:
    """Whether the last row of an index range is found for each row of a batch table faster by a correlated
    `ORDER BY … LIMIT 1` subquery (one seek at the range's end) than by a join grouped per row.

    SQLite: the seek, which reads one entry where the grouped join reads the whole range. PostgreSQL runs
    the subquery as a plan of its own for every row and hashes the grouped join in one pass instead (79 ms
    against 36 ms for the writes alone in their lanes of two batches at scale 0.02, measured); MariaDB
    cannot name the temporary table twice ("Can't reopen table")."""
    return dialect == SQLITE


def skips_through_index(dialect: str) -> bool:
    """Whether the distinct values of an indexed column are found faster by a recursive query that seeks the
    next one through the index, one seek a value, than by a `DISTINCT` over every row.

    PostgreSQL and SQLite: the seeks (the 115 days of the wide shape's 66,615 facts at 0.1, measured
    warm: 1.4 ms against 22 ms on PostgreSQL, 0.1 ms against 6 ms on SQLite). MariaDB runs the recursive
    part's subquery far slower than its `DISTINCT` (344 ms against 4 ms for the same days at 0.05), and reads
    the `DISTINCT` of an index's first column by a loose scan of the index, one entry a value."""
    return not is_mariadb(dialect)


def seeks_below_outer_bound(dialect: str) -> bool:
    """Whether a correlated `ORDER BY k DESC LIMIT 1` subquery under a bound from the outer row (`k <= outer`
    after the index's equal parts) seeks the bound and reads one entry.

    MariaDB reads the index by its equal parts (`ref`) from their end and passes every entry above the bound:
    for rule 3's positions, each write of a lane read the lane's later rows, 42.7 s of a 112 s run on a
    lane of 5,000 writes (`--shape one-editor`, scale 0.05, measured). SQLite and PostgreSQL seek."""
    return not is_mariadb(dialect)


def counts_lane_positions(dialect: str) -> bool:
    """Whether the positions of a lane's writes (rule 3) are counted in one pass over the lane's rows and
    writes rather than sought write by write: where the engine does not seek below a bound, and on
    PostgreSQL, whose seek into a temporary table's index fetches the row from the table too (autovacuum
    never visits a temporary table, so no page is marked all-visible): 0.48 s against 0.70 s for the
    positions of one-editor's 0.1, the same on the wide and fanout shapes (measured). SQLite's seek is the
    cheaper there (0.30 s against 0.51 s)."""
    return not seeks_below_outer_bound(dialect) or dialect == POSTGRESQL


def sqlite_rowid(rows: NamedFromClause) -> ColumnElement[int]:
    """The rowid of a row of a SQLite table (or alias) declared without a key: the row is read by it in one
    lookup, as by an integer primary key, while the table's rows are appended in whatever order they come."""
    return literal_column(f"{rows.name}.rowid", Integer)


def hashes_a_list(dialect: str) -> bool:
    """Whether `x IN (SELECT …)` of a batch table, asked of every row a statement reads, is answered from the
    list hashed once, better than from a table of the list filled beforehand.

    PostgreSQL hashes the list (a hashed SubPlan) and filters the rows with it before its join: the window's
    rows at scale 0.2 took 0.40 s against 0.66 s with the own rows' table and its key (measured). SQLite
    builds the list once too, but gained nothing over the table (its window statement took 90-93 ms with the
    list, 83-85 ms with the table); MariaDB cannot name the temporary table twice ("Can't reopen table")."""
    return dialect == POSTGRESQL


def probes_grouped_subquery(dialect: str) -> bool:
    """Whether a join with a grouped subquery builds the subquery once, keyed by the join's columns, and
    probes it per row, rather than asking a correlated subquery of every row.

    SQLite materializes it with an automatic index, PostgreSQL hashes it: a hot record's history rows each
    found the writer's channel among forty in one probe (the statement filling a run's history rows, wide
    shape: 0.78 s against 1.51 s on PostgreSQL at scale 0.05, 1.07 s against 1.66 s on SQLite at 0.1,
    measured). MariaDB took longer with it than with the correlated subquery: 2.25 s against 1.47 s on the
    default shape at 0.05, but not where a record has dozens of writers (adapters.own_rows.MANY_CHANNELS)."""
    return not is_mariadb(dialect)


def not_for_an_index(dialect: str, column: ColumnElement[Any]) -> ColumnElement[Any]:
    """The column as a value no index may be built or used for: SQLite's documented `+column` (there `column +
    0`), which keeps its planner from building an automatic index on the term for one statement. Elsewhere
    the column itself."""
    return column + 0 if dialect == SQLITE else column


def delete_matching(
    dialect: str,
    table: Table,
    column: ColumnElement[Any],
    key: ColumnElement[Any],
    where: ColumnElement[bool] | None = None,
) -> Delete:
    """DELETE the rows of `table` whose `column` equals a non-NULL `key` (a column of a batch table, or of
    another table's rows that `where` picks).

    MariaDB before 11.1 runs `DELETE … WHERE column IN (SELECT …)` as a subquery asked again for every row of
    the table (6.9 s for 19,000 facts against 19,000 keys, measured), and where the subquery reads a range
    it reads the range again for each (0.24 s for 1,049 pending runs against 11,000 new targets): there it is
    a multi-table DELETE, the key's table joined to the target's key; the others answer the IN with a
    semi-join."""
    if is_mariadb(dialect):
        return delete(table).where(column == key, *([] if where is None else [where]))
    return delete(table).where(column.in_(select(key).where(key.is_not(None) if where is None else where)))


def inner_probe(
    dialect: str,
    left: FromClause,
    right: FromClause,
    on: ColumnElement[bool],
    columns: Sequence[ColumnElement[Any]],
    name: str,
) -> tuple[Join, FromClause]:
    """`left JOIN right ON on`, and what the right side's `columns` are read from (see outer_probe)."""
    if dialect == POSTGRESQL:
        found = select(*columns).where(on).offset(0).lateral(name)
        return left.join(found, true()), found
    return left.join(right, on), right


def outer_probe(
    dialect: str,
    left: FromClause,
    right: FromClause,
    on: ColumnElement[bool],
    columns: Sequence[ColumnElement[Any]],
    name: str,
) -> tuple[Join, FromClause]:
    """`left LEFT JOIN right ON on`, and what the right side's `columns` are read from.

    PostgreSQL looks each row up through a fenced LATERAL subquery: a plain join lets its planner, without
    statistics on `right`, sort the whole table for every page of `left`.
    """
    if dialect == POSTGRESQL:
        found = select(*columns).where(on).offset(0).lateral(name)
        return left.outerjoin(found, true()), found
    return left.outerjoin(right, on), right


def reads_key_ranges(dialect: str) -> bool:
    """The dialect reads a batch's rows of a large table faster as one range of its primary key than one
    index lookup per row (`in_key_range`), where the range holds little else.

    MariaDB: in key order each page is read once, in order, with InnoDB's read-ahead; a lookup per row
    read them one page at a time (4,600 pages, 0.9 s of 2.1 s for the 300,000 events of a batch, with the
    default 128 MB buffer pool, measured). SQLite and PostgreSQL read their index's order as fast or faster.
    """
    return is_mariadb(dialect)


def in_key_range(
    dialect: str, query: Select[Any], table: Table, key: ColumnElement[Any], low: Any, high: Any
) -> Select[Any]:
    """`query`, which reads `table` first, restricted to the range low…high of its primary key `key`: read
    in key order, every other table looked up for each row (MariaDB: FORCE INDEX (PRIMARY) and
    STRAIGHT_JOIN, whatever the statistics say)."""
    ranged = query.where(key.between(low, high))
    return in_order(dialect, by_index(dialect, ranged, table, "PRIMARY"))


def keys_first(dialect: str, query: Select[Any], keys: Table, table: Table, index: str) -> Select[Any]:
    """`query`, which joins the batch table `keys` to `table`: `keys` read first, in its primary key's order,
    and each of its rows looked up in `table` through `index` (MariaDB: STRAIGHT_JOIN and FORCE INDEX on
    both, whatever the statistics say; right after a bulk load InnoDB may count the table as nearly empty
    and scan it whole instead, as it did for the events of two runs, measured)."""
    ordered = by_index(dialect, by_index(dialect, query, keys, "PRIMARY"), table, index)
    return in_order(dialect, ordered)
