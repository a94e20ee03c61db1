"""The dashboard's engine and cached queries: caching lives here, never in the query functions."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from dashboard import queries
from jobs import settings
from jobs.database import make_engine

CACHE_TTL_S = 60  # pages re-read at most once a minute; the nightly jobs change the tables once a day


@st.cache_resource
def engine() -> Engine:
    """One engine per dashboard process, for the database the command was started on."""
    return make_engine(settings.get("db"))


@st.cache_data(ttl=CACHE_TTL_S)
def table_counts() -> pd.DataFrame:
    """Rows per table (cached)."""
    return queries.table_counts(engine())
