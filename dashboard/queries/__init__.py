"""The presenters: what each page shows, shaped from what adapters/ reads, as plain values or DataFrames.

One module per page (rates, runs, run, conversations, health) and one for what every page needs (common). A
presenter opens a connection for a page's reads and calls adapters/ and core/; it builds no SQL (adapters/
does, on the Table objects of adapters.schema with bound parameters) and caches nothing (dashboard/state.py
does). `be_user` and sys_history's `userid` are never selected, tool arguments and results are never read,
and of history_data only the keys.
"""
