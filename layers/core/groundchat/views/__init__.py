"""Views: small, checked displays of numbers (stats, table, alert, bar chart, form) an answer may show.

`catalog` says what a view may contain, `grounding` checks its numbers against what the data
tools returned in the same answer, `actions` says what a form may run, and `review` puts the
three together for the `show_view` tool.
"""
