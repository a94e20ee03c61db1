"""What the dashboard reads: plain functions over an engine, returning plain values or DataFrames.

One module per page (rates, runs, run, conversations, health) and one for what every page needs (common). No
page holds SQL and no query function caches: caching lives in dashboard/state.py. Every query is a Core
`select()` on the Table objects of adapters.schema with bound parameters; `be_user` and sys_history's `userid`
are never selected, tool arguments and results are never read, and of history_data only the keys.
"""
