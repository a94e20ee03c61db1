"""The first thing every page shows when it cannot go on: no database, no tables, tables missing, a failure.

`show` returns the data version when the settings are well-formed and the page can read the tables it needs;
otherwise it explains what to do, in one clear message, and returns None. `reading` turns a database error
inside a page into one line, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from adapters import schema, settings
from adapters.conversations import ConversationNotFoundError
from adapters.database import RunrecordError, one_line, parse_url, sqlite_path
from dashboard import state
from dashboard.queries.common import DataVersion

NO_TABLES = "This database has none of the tables runrecord reads. Run `runrecord init-db` first."


def show(needed: Iterable[str], *, key: str) -> DataVersion | None:
    """The data version, or None after saying why the page cannot be shown (a malformed setting, the database
    or its tables)."""
    try:
        state.window_s()
        state.own_transcript_skills()
        settings.admin_session_minutes()
        settings.admin_session_secret()
    except RunrecordError as error:
        st.error(f"A setting is malformed: {error}. Correct it and start the dashboard again.")
        return None
    try:
        path = sqlite_path(parse_url(state.db_url()))
        if path is not None and not path.is_file():
            st.error(
                f"There is no database file at {path}. Start the dashboard with `runrecord demo`, or point "
                "RUNRECORD_DB at the installation's database."
            )
            return None
        version = state.version()
    except (RunrecordError, SQLAlchemyError) as error:
        st.error(f"The database cannot be read: {_line(error)}")
        return None
    known = set(schema.upstream.tables) | set(schema.ours.tables)
    if not version.tables & known:
        st.info(NO_TABLES, icon=":material/database:")
        return None
    missing = sorted(set(needed) - version.tables)
    if missing:
        ours = [name for name in missing if name in schema.ours.tables]
        hint = "run `runrecord init-db`" if ours else "this is not the installation's database"
        st.warning(f"This page needs {', '.join(missing)}, which this database lacks: {hint}.")
        return None
    return version


@contextmanager
def reading() -> Iterator[None]:
    """Show a database failure inside the block as one line and stop the page."""
    try:
        yield
    except ConversationNotFoundError:
        raise  # not a failure: the page says that there is no such conversation
    except (RunrecordError, SQLAlchemyError) as error:
        st.error(f"Reading the database failed: {_line(error)}")
        st.stop()


def _line(error: Exception) -> str:
    return one_line(error) if isinstance(error, SQLAlchemyError) else str(error)
