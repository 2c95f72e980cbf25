"""`groundchat try` asks the running app and continues the conversation after the first question."""
import re

from groundchat_cli.client import ask_all
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.test_disconnect import serve_in_thread


def test_try_prints_two_answers_in_one_conversation(make_env, capsys):
    model = ScriptedModel([
        Step(tool_calls=[("compare_contexts", {"context": "full"})]),
        Step(text="Full context is best [deadbeef]."),
        Step(text="It costs $0.0126 per run."),
    ])
    env = make_env(model)
    server, thread, url = serve_in_thread(env.app)
    try:
        assert ask_all(url, "alice", ["Which context level is best?", "And what does it cost?"]) == 0
    finally:
        server.should_exit = True
        thread.join(5)
    out = capsys.readouterr().out
    conversations = re.findall(r"conversation: ([0-9a-f]{32})", out)
    assert len(conversations) == 2 and conversations[0] == conversations[1]
    assert "tools: compare_contexts" in out
    assert "Full context is best [deadbeef]." in out
    assert "citation [deadbeef] UNVERIFIED: no tool in this answer returned it" in out
    assert "It costs $0.0126 per run." in out
    # The second question reached the model with the first exchange before it.
    assert [m.content for m in model.requests[2].messages if m.role == "user"] == ["Which context level is best?", "And what does it cost?"]
