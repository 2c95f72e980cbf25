"""A shared conversation's images: served by the share function while it is shared, the same 404
for an unshared conversation, an unknown hash or an image of another conversation."""
from __future__ import annotations

import hashlib

import httpx
import pytest

from groundchat.attachments.storage import ImageStore
from groundchat.models.messages import ImageRef, Message
from groundchat.services import Services
from share_function.app import create_share_app
from tests.attachments.images import picture

SHARED = "d" * 32
PRIVATE = "e" * 32


async def with_image(store, conversation_id: str, data: bytes, *, shared: bool) -> str:
    sha = hashlib.sha256(data).hexdigest()
    image = ImageRef(media_type="image/png", width=64, height=40, sha256=sha, alt="A form's submit button", data=data)
    messages = [Message(role="user", content="Why is this flagged?", images=[image]),
                Message(role="assistant", content="Its contrast is too low.")]
    await store.commit_exchange(conversation_id=conversation_id, owner="alice", run_id="run-" + conversation_id[:6],
                                existing=None, messages=messages, annotations={}, title="Why is this flagged?")
    if shared:
        assert await store.set_shared(conversation_id, "alice", True) is not None
    return sha


@pytest.fixture
async def env(dynamo, settings, counting_model):
    ImageStore(settings).ensure_bucket()
    services = Services(settings=settings, dynamo=dynamo, model_override=counting_model)
    shared_png, private_png = picture(64, 40), picture(64, 40, "PNG", "L")
    shas = {"shared": await with_image(services.conversations, SHARED, shared_png, shared=True),
            "private": await with_image(services.conversations, PRIVATE, private_png, shared=False)}
    app = create_share_app(services)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://share") as c:
        yield c, services, shas, shared_png


async def test_a_shared_conversations_image_is_served_with_its_type(env):
    client, _, shas, png = env
    listed = (await client.get(f"/api/shared/{SHARED}")).json()["messages"][0]["images"]
    assert listed == [{"sha256": shas["shared"], "media_type": "image/png", "width": 64, "height": 40, "alt": "A form's submit button"}]
    r = await client.get(f"/api/shared/{SHARED}/images/{shas['shared']}")
    assert r.status_code == 200 and r.content == png
    assert r.headers["content-type"] == "image/png" and r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-cache"


async def test_unshared_unknown_or_foreign_images_are_the_same_404(env):
    client, services, shas, _ = env
    asks = [f"/api/shared/{PRIVATE}/images/{shas['private']}",  # not shared
            f"/api/shared/{SHARED}/images/{shas['private']}",  # another conversation's image
            f"/api/shared/{SHARED}/images/{'0' * 64}",  # no such image
            f"/api/shared/{SHARED}/images/not-a-hash", "/api/shared/nope/images/" + shas["shared"]]
    for path in asks:
        r = await client.get(path)
        assert r.status_code == 404 and r.json()["error"]["code"] == "not-found", path
    # Unsharing takes effect at once.
    await services.conversations.set_shared(SHARED, "alice", False)
    assert (await client.get(f"/api/shared/{SHARED}/images/{shas['shared']}")).status_code == 404
