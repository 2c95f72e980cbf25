"""Imports every module that registers a table, so create_tables (and the template generator)
see them all."""
import groundchat.store.budget_counters  # noqa: F401
import groundchat.store.runs  # noqa: F401
import groundchat.store.usage  # noqa: F401
