"""Answering a question: the use case (checks in order, claim, history, price, precheck, loop,
commit, trace), the loop, history profiles, prompts and the frames an answer streams."""
