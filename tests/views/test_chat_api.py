"""Over HTTP: the view goes out as an SSE `view` event, and a shared conversation carries it."""
import httpx

from groundchat.auth.tokens import issue_dev_token
from groundchat.auth.callers import ALL_PERMISSIONS
from groundchat.offline.answerer import OfflineAnswerer


def events(text):
    import json

    out = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        out.append((lines[0].removeprefix("event: "), json.loads("".join(l[6:] for l in lines[1:] if l.startswith("data: ")))))
    return out


async def test_the_view_streams_and_is_shared_with_the_answer(sample, settings):
    from chat_function.app import create_app
    from share_function.app import add_share_routes

    sample.model_override = OfflineAnswerer()
    sample.users.table.put_item(Item={"user_id": "alice", "grants": set(ALL_PERMISSIONS)})
    app = create_app(sample)
    add_share_routes(app, sample)
    auth = {"authorization": f"Bearer {issue_dev_token(settings, 'alice')}"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        r = await client.post("/api/chat", json={"stream": True, "message": "Which context level is best?"}, headers=auth)
        frames = events(r.text)
        views = [data for kind, data in frames if kind == "view"]
        assert [kind for kind, _ in frames][-1] == "done" and frames[-1][1]["reason"] == "complete"
        assert len(views) == 1 and views[0]["title"] == "Context levels compared"
        conversation_id = frames[0][1]["conversation_id"]
        assert (await client.post(f"/api/conversations/{conversation_id}/share", headers=auth)).status_code == 200
        shared = (await client.get(f"/api/shared/{conversation_id}")).json()
    answer = [m for m in shared["messages"] if m["role"] == "assistant"][-1]
    assert answer["annotations"]["views"] == views
    assert "citations" in answer["annotations"]
