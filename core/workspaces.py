"""Which rows of a workspace changed the live record (DESIGN.md rule 4, workspaces).

TYPO3 13.4.16 and later move a draft's rows onto the live record's uid when they publish it (they keep their
workspace) and write a publish row (7, workspace 0) after them; until then a draft's rows are the version's,
another uid. TYPO3 12.4 and 13.4 up to 13.4.15 publish a draft as a modify row on the live uid, written with
the publisher's workspace (workspaces' DataHandlerHook::version_swap calls DataHandler::setHistory, whose
RecordHistoryStore takes the backend user's workspace), and leave the draft's rows on the version. And a table
that is not versioned is edited live from a workspace (BackendUserAuthentication::
workspaceAllowsLiveEditingInTable). So a row of a workspace on the record's uid changed the live record
where a live row of the record was inserted before it and no publish row after it; any other is a draft. A
record created in a workspace has its own uid for its version: its rows are a workspace's from its add row
on, with no live row before them, and TYPO3 before 13.4.16 writes no publish row when it publishes one.

A publish row written after an upgrade to 13.4.16 also makes a draft of an earlier publish's modify row
(TYPO3 before 13.4.16) inserted before it: a derivation that reads both, for a write between them, misses
that publish.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from core.outcomes import Action, HistoryRow


def live_changes(rows: Sequence[HistoryRow]) -> list[HistoryRow]:
    """The rows with `live` read as a change of the live record: a workspace's row is live where a live row
    of the record was inserted before it and no publish row after it."""
    last_publish = max((row.uid for row in rows if row.live and row.action is Action.PUBLISH), default=0)
    first_live = min((row.uid for row in rows if row.live), default=None)
    return [
        replace(row, live=True)
        if not row.live and first_live is not None and first_live < row.uid and row.uid > last_publish
        else row
        for row in rows
    ]
