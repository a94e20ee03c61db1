"""The link a selected figure (a rate chart's point, a split's cell) puts beside it: the Runs page with the
runs its n counts (queries.drill_down.counted_runs).

A link, not st.switch_page: a switch writes the Runs filter into the Rates page's own entry of the browser's
history before it leaves (Streamlit pushes the changed parameters), so Back would return to a Rates page that
has lost its filter bar's choices. A link adds the Runs page as a new entry and leaves the Rates page's as it
was, and it opens in a new tab as any link does.
"""

from __future__ import annotations

import streamlit as st

from adapters.runs import RunFilter
from core.formatting import plural
from dashboard import navigation, url_state


def label(n: int, what: str) -> str:
    """The link's text: how many runs it opens and which figure counts them."""
    return f"Open the {plural(n, 'run')} counted in {what}"


def show(chosen: RunFilter, n: int, what: str) -> None:
    """The link to the Runs page filtered to `chosen`, the n runs the figure `what` counts."""
    st.page_link(
        str(navigation.RUNS),
        label=label(n, what),
        query_params={url_state.RUNS_FILTER: url_state.runs_filter_json(chosen)},
        icon=":material/table_rows:",
    )
