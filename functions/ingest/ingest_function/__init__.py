"""The scheduled ingest function."""
