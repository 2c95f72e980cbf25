"""Answering a question: the use case (the request, the checks in order, the composition), the run
it builds (committed and traced), the loop, history profiles and prompts."""
