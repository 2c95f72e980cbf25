"""The words one question-and-answer exchange is made of, shared by every wing that takes part in
it: the typed frames an answer streams (frames.py), what an answer accumulates while it runs
(state.py), and a question refused before any model call (refusal.py). Below `chat/`, so the tools,
the grounding and the public gate speak them without reaching up to the use case."""
