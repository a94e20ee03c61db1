"""What the dashboard reads: plain functions over an engine, returning plain values or DataFrames.

No page holds SQL; every query lives here, on the Table objects of core.schema.
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Engine, func, inspect, select

from core import schema


def table_counts(engine: Engine) -> pd.DataFrame:
    """Rows per table, upstream and ours; a table the database lacks is listed as missing."""
    with engine.connect() as connection:
        present = set(inspect(connection).get_table_names())
        rows = []
        for kind, metadata in (("upstream", schema.upstream), ("runrecord", schema.ours)):
            for table in metadata.sorted_tables:
                count = (
                    connection.execute(select(func.count()).select_from(table)).scalar_one()
                    if table.name in present
                    else None
                )
                rows.append({"table": table.name, "kind": kind, "rows": count})
    return pd.DataFrame(rows, columns=["table", "kind", "rows"])
