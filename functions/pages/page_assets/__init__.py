"""The transcript's script and style, shared by the functions that serve pages (chat and share).

Not part of the core layer: infra/package.py copies this package into the chat and share artifacts
only, so the ingest and sweep functions carry no page code."""
