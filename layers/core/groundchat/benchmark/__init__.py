"""The benchmark's runs as a domain: run types and their aggregation, importing real axe-core
results, and the axe rule → WCAG criterion lookup."""
