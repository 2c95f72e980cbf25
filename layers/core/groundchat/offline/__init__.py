"""The offline answerer: a deterministic stand-in for a model, the default of a fresh checkout. It
routes a question to the tools (router*.py, topic_neighbours.py, name_matching.py), fills templates
from their results (templates.py), and summarises an excerpt it is handed as data (summary.py).
A wing of its own above the tools, the search and recall it answers with; only the composition
(services.py) builds it."""
