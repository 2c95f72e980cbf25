"""The benchmark's runs as a domain: run types and their aggregation, and the axe rule → WCAG
criterion lookup (storing and importing runs: store/runs.py, store/runs_import.py)."""
