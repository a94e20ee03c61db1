"""The table catalog a write target's table name is matched against."""

from __future__ import annotations

import warnings

from sqlalchemy import create_engine

from adapters.history import TableCatalog


def test_a_column_type_from_a_mysql_dump_reads_without_a_warning() -> None:
    engine = create_engine("sqlite://")
    with engine.connect() as connection:
        connection.exec_driver_sql("CREATE TABLE pages (uid INTEGER(11) PRIMARY KEY, deleted SMALLINT(6))")
        connection.exec_driver_sql("CREATE TABLE sys_log (message VARCHAR(255))")
        catalog = TableCatalog(connection)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pages, log = catalog.get("pages"), catalog.get("sys_log")

    assert pages is not None and (pages.has_uid, pages.has_deleted) == (True, True)
    assert log is not None and (log.has_uid, log.has_deleted) == (False, False)
    assert catalog.get("tt_content") is None and "pages" in catalog
