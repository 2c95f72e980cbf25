"""Imports every module that registers a table, so create_tables sees them all."""
import importlib

for _module in ("groundchat.store.runs", "groundchat.store.usage", "groundchat.store.budget_counters"):
    try:
        importlib.import_module(_module)
    except ModuleNotFoundError as exc:  # a store module not in this build yet
        if exc.name != _module:
            raise
