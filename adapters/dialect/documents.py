"""A JSON document's members read in SQL, one reading for the three dialects: kinds, texts, integers, lists.

The chat's own columns (a message payload, the run record) are read where they are stored, so that only the
texts a text rule judges leave the database (DESIGN.md, "The data path"). A member is named by its path of
keys; `kind` gives the same names on every dialect, as Python's json would type the value:

* "object", "array", "string", "integer" (a number without fraction or exponent), "number" (any other),
  "boolean", "null" (the JSON null), and SQL NULL where the document holds no such member.

Exponents are read as the database reads them (SQLite keeps `1e2` a real; MariaDB and PostgreSQL's jsonb
rewrite it as 100): no writer of these columns writes one. A text is compared byte for byte (MariaDB's
default collations would match "Completed" and "completed " with "completed").

Where a reading asks about several members, adapters.dialect.document_members hands them over as rows, each
read once.

PostgreSQL reads jsonb: `document(guarded=False)` casts directly the texts that look like a JSON object (`{`
… `}` within white space) and raises on such a text that is not JSON after all; `sqljson.cast_first` then
asks again guarded. Any other text is no object, and a payload or record entry that is no object is
unreadable anyway. `is_object(guarded=False)` only validates such a text, as json.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    String,
    case,
    cast,
    exists,
    func,
    literal,
    literal_column,
    select,
)
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from adapters.dialect.json import PG_JSONB_FUNCTION
from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb

Path = Sequence[str]
# A member as the dialect reads it: (a document, the path inside it); Members.at gives one.
Member = tuple[ColumnElement[Any], Path]
# A check of an item of a list, read as a document of its own.
Item = Callable[[ColumnElement[Any]], ColumnElement[bool]]

# The integer range the scratch tables hold: a larger count (position, segment) is read as the bound, which
# compares as Python compares the number itself with the counts and sortings a database holds.
INT_MIN = -2_147_483_648
INT_MAX = 2_147_483_647
_INT_DIGITS = 9  # a text of at most this many digits fits an int column

_JSON_WHITE_SPACE = " \t\n\r"

KINDS = ("object", "array", "string", "integer", "number", "boolean", "null")


def document(
    dialect: str, text: ColumnElement[Any], *, guarded: bool = True, of: str = "object"
) -> ColumnElement[Any]:
    """The text as the document the other functions read; NULL when it is not JSON (PostgreSQL: not of the
    kind `of`, "object" or "array", either, which every caller treats as unreadable)."""
    if dialect == POSTGRESQL:
        parsed: ColumnElement[Any] = (
            getattr(func, PG_JSONB_FUNCTION)(text, type_=pg.JSONB) if guarded else text.cast(pg.JSONB)
        )
        return _looks_like(text, of, parsed)
    if dialect == SQLITE or is_mariadb(dialect):
        return case((func.json_valid(text) == 1, text))
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def _looks_like(text: ColumnElement[Any], of: str, parsed: ColumnElement[Any]) -> ColumnElement[Any]:
    """`parsed` where the text opens as a JSON object (`of` "object") or array does, or looks like one within
    white space; else NULL (PostgreSQL)."""
    opening, shape = ("{", "{%}") if of == "object" else ("[", "[%]")
    # The text's first character first (nearly every one is stored without white space around it): trimming
    # every text cost half as much again as the cast itself (0.25 s for 300,000 event payloads), and asking
    # for its last character too, as `LIKE '{%}'`, half as much again as well (40-45 ms against 7-12 ms for
    # the first character alone, the cast 80-85 ms, for a batch's 210,000 event payloads, measured). A text
    # that opens like a document and is none raises, as one that also closed like it did.
    return case(
        (func.left(text, 1) == opening, parsed),
        (func.btrim(text, _JSON_WHITE_SPACE).like(shape), parsed),
    )


def is_object(dialect: str, text: ColumnElement[Any], *, guarded: bool = True) -> ColumnElement[bool]:
    """The text is a JSON object; false (never NULL, never an error) for anything else.

    A valid text that starts with `{` is an object: SQLite and MariaDB then only validate it, instead of
    parsing it a second time for its type (most payloads are stored so; measured on MariaDB: 0.3 s for the
    300,000 event payloads of a batch)."""
    if dialect == SQLITE or is_mariadb(dialect):
        return func.coalesce(
            case(
                (text.like("{%"), func.json_valid(text) == 1),
                else_=is_kind(dialect, document(dialect, text), (), "object"),
            ),
            False,
        )
    if dialect == POSTGRESQL and not guarded:
        # Validated as json, not built as jsonb: a third of the time (0.09 s against 0.28-0.32 s for 350,000
        # event payloads, measured), and the reading an event's kept keys go through (adapters.dialect.
        # payload). It raises on a text that looks like an object and is not JSON, as the jsonb cast does.
        return func.coalesce(
            func.json_typeof(_looks_like(text, "object", text.cast(pg.JSON))) == "object", False
        )
    return is_kind(dialect, document(dialect, text, guarded=guarded), (), "object")


def mysql_path(path: Path) -> str:
    return "$" + "".join(f".{key}" for key in path)


def mariadb_member(doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    # The document itself at the empty path: JSON_EXTRACT(doc, '$') would only parse it once more.
    return func.json_extract(doc, mysql_path(path)) if path else doc


def pg_member(doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    member = doc
    for key in path:
        member = member.op("->", return_type=pg.JSONB)(literal(key, String))
    return member


def kind(dialect: str, doc: ColumnElement[Any], path: Path = ()) -> ColumnElement[Any]:
    """The member's kind (KINDS), NULL when the document holds no such member (or is NULL)."""
    if dialect == POSTGRESQL:
        member = pg_member(doc, path)
        typed = func.jsonb_typeof(member)
        integer = cast(member, String).regexp_match("^-?[0-9]+$")
        return case(
            (typed == "number", case((integer, "integer"), else_="number")),
            else_=typed,
        )
    if dialect == SQLITE:
        typed = func.json_type(doc, mysql_path(path))
        names = {"text": "string", "real": "number", "true": "boolean", "false": "boolean"}
        return case(*((typed == raw, name) for raw, name in names.items()), else_=typed)
    if is_mariadb(dialect):
        typed = func.json_type(mariadb_member(doc, path))
        names = {
            "OBJECT": "object",
            "ARRAY": "array",
            "STRING": "string",
            "INTEGER": "integer",
            "DOUBLE": "number",
            "DECIMAL": "number",
            "BOOLEAN": "boolean",
            "NULL": "null",
        }
        return case(*((typed == raw, name) for raw, name in names.items()))
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


# The dialect's own names of each kind: `is_kind` asks the database once, without `kind`'s mapping (SQLite
# and MariaDB parse the text again for every function call).
_SQLITE_KINDS = {"string": ("text",), "number": ("real",), "boolean": ("true", "false")}
_MARIADB_KINDS = {"number": ("DOUBLE", "DECIMAL")}


def is_kind(dialect: str, doc: ColumnElement[Any], path: Path, *kinds: str) -> ColumnElement[bool]:
    """The member is of one of `kinds`; false (never NULL) when it is missing."""
    if dialect == SQLITE:
        names = [raw for wanted in kinds for raw in _SQLITE_KINDS.get(wanted, (wanted,))]
        return func.coalesce(func.json_type(doc, mysql_path(path)).in_(names), False)
    if is_mariadb(dialect):
        names = [raw for wanted in kinds for raw in _MARIADB_KINDS.get(wanted, (wanted.upper(),))]
        typed = func.json_type(mariadb_member(doc, path))
        return func.coalesce(typed.in_(names), False)
    if dialect == POSTGRESQL and "integer" not in kinds and "number" not in kinds:
        return func.coalesce(func.jsonb_typeof(pg_member(doc, path)).in_(kinds), False)
    return func.coalesce(kind(dialect, doc, path).in_(kinds), False)


def absent_or_null(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[bool]:
    """The member is missing or the JSON null (Python's `dict.get` gives None for both)."""
    if dialect == SQLITE:
        return func.coalesce(func.json_type(doc, mysql_path(path)) == "null", True)
    if is_mariadb(dialect):
        return func.coalesce(func.json_type(mariadb_member(doc, path)) == "NULL", True)
    return func.coalesce(func.jsonb_typeof(pg_member(doc, path)) == "null", True)


def raw_text(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    """The member's value as text where it is a string (of another kind: something else; ask `kind`)."""
    if dialect == POSTGRESQL:
        if not path:
            return doc.op("#>>", return_type=String)(literal_column("'{}'"))
        member = pg_member(doc, path[:-1])
        return member.op("->>", return_type=String)(literal(path[-1], String))
    if dialect == SQLITE:
        return func.json_extract(doc, mysql_path(path), type_=String)
    if is_mariadb(dialect):
        return func.json_unquote(mariadb_member(doc, path), type_=String)
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def exact(dialect: str, text: ColumnElement[Any]) -> ColumnElement[Any]:
    """The text compared byte for byte (MariaDB's default collations ignore case and trailing spaces)."""
    if is_mariadb(dialect):
        return text.collate("utf8mb4_bin")
    return text


def string(dialect: str, doc: ColumnElement[Any], path: Path, max_length: int) -> ColumnElement[Any]:
    """The member when it is a string of at most max_length characters, else NULL."""
    value = raw_text(dialect, doc, path)
    length = func.length(value) if dialect == SQLITE else func.char_length(value)
    return case((is_kind(dialect, doc, path, "string"), case((length <= max_length, value))))


def nonempty(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[bool]:
    """The member, a string, holds at least one character."""
    value = raw_text(dialect, doc, path)
    length = func.length(value) if dialect == SQLITE else func.char_length(value)
    return func.coalesce(length > 0, False)


def string_in(
    dialect: str, doc: ColumnElement[Any], path: Path, values: Collection[str]
) -> ColumnElement[bool]:
    """The member is a string and one of `values`, exactly."""
    value = exact(dialect, raw_text(dialect, doc, path))
    return func.coalesce(case((is_kind(dialect, doc, path, "string"), value.in_(sorted(values)))), False)


def _integer_text(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    return cast(pg_member(doc, path), String) if dialect == POSTGRESQL else raw_text(dialect, doc, path)


def _small(
    dialect: str, doc: ColumnElement[Any], path: Path
) -> tuple[ColumnElement[Any], ColumnElement[bool]]:
    """The integer member's value, and whether it lies in INT_MIN…INT_MAX (only then is the value read)."""
    if dialect == SQLITE:
        number: ColumnElement[Any] = func.json_extract(doc, mysql_path(path), type_=Integer)
        return number, number.between(INT_MIN, INT_MAX)
    text = _integer_text(dialect, doc, path)
    number = cast(text, pg.INTEGER) if dialect == POSTGRESQL else cast(text, Integer)
    return number, func.char_length(func.replace(text, "-", "")) <= _INT_DIGITS


def integer(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    """The member when it is an integer (INT_MIN and INT_MAX for one beyond them), else NULL."""
    number, small = _small(dialect, doc, path)
    negative = _integer_text(dialect, doc, path).like("-%")
    bounded = case((small, number), (negative, INT_MIN), else_=INT_MAX)
    return case((is_kind(dialect, doc, path, "integer"), bounded))


_MISSING = "missing"  # no such member: what `_typed` names SQL NULL as
# The dialect's own name of each kind `by_kind` tells apart (an integer is a "number" to PostgreSQL).
_RAW_KINDS = {
    POSTGRESQL: {
        "object": "object",
        "array": "array",
        "string": "string",
        "null": "null",
        "number": "number",
    },
    SQLITE: {"object": "object", "array": "array", "string": "text", "null": "null", "integer": "integer"},
}
_MARIADB_RAW_KINDS = {
    "object": "OBJECT",
    "array": "ARRAY",
    "string": "STRING",
    "null": "NULL",
    "integer": "INTEGER",
}


def _typed(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    """The dialect's own name of the member's JSON type; `_MISSING` where the document has no such member."""
    if dialect == POSTGRESQL:
        typed: ColumnElement[Any] = func.jsonb_typeof(pg_member(doc, path))
    elif dialect == SQLITE:
        typed = func.json_type(doc, mysql_path(path))
    elif is_mariadb(dialect):
        typed = func.json_type(mariadb_member(doc, path))
    else:
        raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
    return func.coalesce(typed, _MISSING)


def _raw_kind(dialect: str, kind: str) -> str:
    return (_MARIADB_RAW_KINDS if is_mariadb(dialect) else _RAW_KINDS[dialect])[kind]


def by_kind(
    dialect: str,
    doc: ColumnElement[Any],
    path: Path,
    cases: Mapping[str, ColumnElement[bool] | bool],
    *,
    missing: bool,
) -> ColumnElement[bool]:
    """What `cases` says for the member's kind ("object", "array", "string", "null"); `missing` where the
    document holds no such member; false for any other kind.

    The kind is asked once, in one CASE: `absent_or_null(…) | is_kind(…) & …` asks the database for it
    twice or more, each a JSON function call over the document."""
    whens: dict[str, Any] = {
        _raw_kind(dialect, kind): literal(value) if isinstance(value, bool) else value
        for kind, value in cases.items()
    }
    whens[_MISSING] = literal(missing)
    return case(whens, value=_typed(dialect, doc, path), else_=literal(False))


def is_count(dialect: str, doc: ColumnElement[Any], path: Path, *, optional: bool) -> ColumnElement[bool]:
    """The member is an integer of at least 0; with `optional` also when it is missing or the JSON null.

    Its kind is asked once (`by_kind`; `integer(…) >= 0` beside `absent_or_null` asked it four times)."""
    number, small = _small(dialect, doc, path)
    non_negative = case((small, number >= 0), else_=~_integer_text(dialect, doc, path).like("-%"))
    cases: dict[str, ColumnElement[bool] | bool] = {"null": optional}
    if dialect == POSTGRESQL:
        integral = cast(pg_member(doc, path), String).regexp_match("^-?[0-9]+$")
        cases["number"] = case((integral, non_negative), else_=literal(False))
    else:
        cases["integer"] = non_negative
    return by_kind(dialect, doc, path, cases, missing=optional)


def is_list_of(
    dialect: str, doc: ColumnElement[Any], path: Path, check: Item, *, optional: bool = True
) -> ColumnElement[bool]:
    """The member is a list whose every item passes `check` (`every_item`); with `optional` also when it is
    missing or the JSON null. An empty list passes without its items being listed (a subquery per list
    otherwise, and most lists of a run record entry are empty)."""
    if dialect == POSTGRESQL:
        length: ColumnElement[Any] = func.jsonb_array_length(pg_member(doc, path))
    elif dialect == SQLITE:
        length = func.json_array_length(doc, mysql_path(path))
    else:
        length = func.json_length(mariadb_member(doc, path))
    listed = case((length == 0, literal(True)), else_=every_item(dialect, doc, path, check))
    return by_kind(dialect, doc, path, {"array": listed, "null": optional}, missing=optional)


def array_length(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    """The number of items of the member when it is a list, else NULL."""
    if dialect == POSTGRESQL:
        length = func.jsonb_array_length(pg_member(doc, path))
    elif dialect == SQLITE:
        length = func.json_array_length(doc, mysql_path(path))
    elif is_mariadb(dialect):
        length = func.json_length(mariadb_member(doc, path))
    else:
        raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
    return case((is_kind(dialect, doc, path, "array"), length))


# MariaDB: each item of a list with its position and as the JSON text of its own (as JSON_EXTRACT of `$[n]`
# gives it), so that a check reads the item, not the whole document again for every key it asks about.
_MARIADB_ITEMS = "'$[*]' COLUMNS (ord FOR ORDINALITY, item JSON PATH '$')"


def pg_list(member: ColumnElement[Any]) -> ColumnElement[Any]:
    # jsonb_array_elements raises on anything but a list, and only CASE promises the order of evaluation.
    return case((func.jsonb_typeof(member) == "array", member), else_=literal_column("'[]'::jsonb"))


def every_item(dialect: str, doc: ColumnElement[Any], path: Path, check: Item) -> ColumnElement[bool]:
    """Every item of the member passes `check`, which reads the item as a document of its own; true for a
    member that is no list (ask `kind` too)."""
    alias = "item_" + ("_".join(path) or "top")
    if dialect == POSTGRESQL:
        items = (
            func.jsonb_array_elements(pg_list(pg_member(doc, path)))
            .table_valued("value")
            .render_derived(alias)
        )
        failing = select(literal(1)).select_from(items).where(~check(items.c.value)).correlate_except(items)
        return ~exists(failing)
    if dialect == SQLITE:
        items = func.json_each(doc, mysql_path(path)).table_valued("value", "type").alias(alias)
        # json_each hands over an object or a list as its JSON text and any other value as the SQL value.
        value = case((items.c.type.in_(("object", "array")), items.c.value))
        failing = select(literal(1)).select_from(items).where(~check(value)).correlate_except(items)
        return ~exists(failing)
    if is_mariadb(dialect):
        member = mariadb_member(doc, path)
        items = (
            func.json_table(member, literal_column(_MARIADB_ITEMS)).table_valued("ord", "item").alias(alias)
        )
        failing = select(literal(1)).select_from(items).where(~check(items.c.item)).correlate_except(items)
        return ~exists(failing)
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def text_parts(dialect: str, doc: ColumnElement[Any], path: Path) -> ColumnElement[Any]:
    """The `text` strings of the member's items that are objects, joined by line breaks in list order (a
    multimodal content's text: core.transcript); '' when none."""
    if dialect == POSTGRESQL:
        items = (
            func.jsonb_array_elements(pg_list(pg_member(doc, path)))
            .table_valued("value", with_ordinality="ordinality")
            .render_derived("part")
        )
        text = items.c.value.op("->>", return_type=String)(literal("text", String))
        joined = (
            select(func.string_agg(text, pg.aggregate_order_by(literal("\n"), items.c.ordinality)))
            .select_from(items)
            .where(
                func.jsonb_typeof(items.c.value.op("->", return_type=pg.JSONB)(literal("text"))) == "string"
            )
            .correlate_except(items)
            .scalar_subquery()
        )
    elif dialect == SQLITE:
        items = func.json_each(doc, mysql_path(path)).table_valued("value", "type", "key").alias("part")
        joined = (
            select(func.group_concat(func.json_extract(items.c.value, "$.text"), "\n"))
            .select_from(items)
            .where(items.c.type == "object", func.json_type(items.c.value, "$.text") == "text")
            .correlate_except(items)
            .scalar_subquery()
        )
    elif is_mariadb(dialect):
        member = mariadb_member(doc, path)
        items = (
            func.json_table(member, literal_column("'$[*]' COLUMNS (ord FOR ORDINALITY)"))
            .table_valued("ord")
            .alias("part")
        )
        part_text = func.json_extract(member, func.concat("$[", items.c.ord - 1, "].text"))
        joined = (
            select(_LinesInOrder(func.json_unquote(part_text), items.c.ord))
            .select_from(items)
            .where(func.json_type(part_text) == "STRING")
            .correlate_except(items)
            .scalar_subquery()
        )
    else:
        raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
    return func.coalesce(joined, "")


class _LinesInOrder(FunctionElement[str]):
    """MariaDB: GROUP_CONCAT(text ORDER BY position SEPARATOR line break)."""

    name = "lines_in_order"
    type = String()
    inherit_cache = True


@compiles(_LinesInOrder)
def _compile_lines(element: _LinesInOrder, compiler: Any, **kw: Any) -> str:
    text, position = (compiler.process(clause, **kw) for clause in element.clauses)
    return f"GROUP_CONCAT({text} ORDER BY {position} SEPARATOR '\\n')"


def matches_record(dialect: str, text: ColumnElement[Any], table_max: int) -> ColumnElement[bool]:
    """The text is "table:uid" as the run record names a record: [A-Za-z0-9_]{1,table_max}:[1-9][0-9]*."""
    if dialect == POSTGRESQL:
        return text.regexp_match(f"^[A-Za-z0-9_]{{1,{table_max}}}:[1-9][0-9]*$")
    if is_mariadb(dialect):
        # (?-i): MariaDB matches case-insensitively under a case-insensitive collation; \z: PCRE's $ would
        # let a final line break pass.
        return text.op("REGEXP")(literal(f"(?-i)^[A-Za-z0-9_]{{1,{table_max}}}:[1-9][0-9]*\\z"))
    if dialect == SQLITE:
        # No REGEXP without an extension: the parts around the first colon, each checked by GLOB.
        colon = func.instr(text, ":")
        table = func.substr(text, 1, colon - 1)
        uid = func.substr(text, colon + 1)
        return func.coalesce(
            (colon > 1)
            & (colon - 1 <= table_max)
            & table.op("NOT GLOB")(literal("*[^A-Za-z0-9_]*"))
            & uid.op("GLOB")(literal("[1-9]*"))
            & uid.op("NOT GLOB")(literal("*[^0-9]*")),
            False,
        )
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def blank(dialect: str, text: ColumnElement[Any]) -> ColumnElement[bool]:
    """The text is NULL or only JSON white space."""
    if dialect == POSTGRESQL:
        trimmed = func.btrim(text, _JSON_WHITE_SPACE)
    elif dialect == SQLITE:
        trimmed = func.trim(text, _JSON_WHITE_SPACE)
    elif is_mariadb(dialect):
        trimmed = func.trim(func.replace(func.replace(func.replace(text, "\t", " "), "\n", " "), "\r", " "))
    else:
        raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
    return func.coalesce(trimmed == "", True)
