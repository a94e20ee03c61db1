"""The error every command and page reports as one line: kept apart from adapters.database so that the
command line can name it without importing SQLAlchemy (`runrecord --help` starts at once)."""

from __future__ import annotations


class RunrecordError(Exception):
    """A failure to report as one line to the user, with a non-zero exit."""
