"""POST /api/chat with images (multipart/form-data): the scripted model receives the image, the
exchange stores it in S3 by key and hash, the owner reads it back, a later question sees it again,
and every bad file is a 400 with a reason before any model call, storing nothing."""
from __future__ import annotations

import base64
import hashlib
import io

import pytest
from PIL import Image

from groundchat.attachments.storage import ImageStore
from groundchat.models.bedrock import to_converse_request
from groundchat_testkit.providers import assert_bedrock_request
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import ASKS_FOR_THE_STREAM, parse_sse
from tests.attachments.images import bomb_png, picture

SONNET = "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0"


@pytest.fixture
def bucket(settings, dynamo):
    store = ImageStore(settings)
    store.ensure_bucket()
    return store


def stored_keys(bucket) -> list[str]:
    return sorted(o["Key"] for o in bucket.client.list_objects_v2(Bucket=bucket.bucket).get("Contents", []))


def form(message="Why does axe flag this button?", images=(("button.png", picture(1920, 1080)),), alts=(), **fields):
    files = [("image", (name, data, "application/octet-stream")) for name, data in images]
    return {"data": {"message": message, **({"alt": list(alts)} if alts else {}), **fields}, "files": files}


async def test_an_image_reaches_the_model_as_an_image_block_and_is_stored_by_key_and_hash(make_env, bucket):
    model = ScriptedModel([Step(text="The button's contrast is 2.1:1."), Step(text="The same one.")], model_id=SONNET)
    env = make_env(model)
    screenshot = picture(1920, 1080)
    async with env.client() as c:
        r = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM},
                         **form(images=[("button.png", screenshot), ("menu.jpg", picture(400, 300, "JPEG"))], alts=["Submit button"]))
        assert r.status_code == 200, r.text
        frames = parse_sse(r.text)
        conv = frames[0][1]["conversation_id"]
        stored = (await c.get(f"/api/conversations/{conv}", headers=env.token("alice"))).json()
        shown = stored["messages"][0]["images"]
        thumb = await c.get(f"/api/conversations/{conv}/images/{shown[0]['sha256']}", headers=env.token("alice"))
        foreign = await c.get(f"/api/conversations/{conv}/images/{shown[0]['sha256']}", headers=env.token("bob"))
        later = await c.post("/api/chat", json={"stream": True, "message": "And now?", "conversation_id": conv}, headers=env.token("alice"))

    assert frames[-1][0] == "done" and frames[-1][1]["reason"] == "complete"
    # What the model received: the question with both images, bytes included, stamped with its bound.
    asked = model.requests[0].messages[-1]
    assert [(i.media_type, i.width, i.height, i.alt) for i in asked.images] == [
        ("image/png", 1429, 804, "Submit button"), ("image/jpeg", 400, 300, "menu.jpg")]
    assert asked.images[0].token_bound == 1532
    # ... and what Bedrock would be sent for it, through botocore's validator and the strict checker.
    body = to_converse_request(model.requests[0], SONNET.removeprefix("bedrock:"))
    assert_bedrock_request(body)
    blocks = [b["image"] for b in body["messages"][-1]["content"] if "image" in b]
    assert [hashlib.sha256(b["source"]["bytes"]).hexdigest() for b in blocks] == [i.sha256 for i in asked.images]

    # Stored: the bytes in S3 under the conversation, the message naming them by key and hash.
    assert stored_keys(bucket) == sorted(f"conversations/{conv}/{i.sha256}.{ext}" for i, ext in zip(asked.images, ("png", "jpg")))
    assert shown == [{"sha256": asked.images[0].sha256, "media_type": "image/png", "width": 1429, "height": 804, "alt": "Submit button"},
                     {"sha256": asked.images[1].sha256, "media_type": "image/jpeg", "width": 400, "height": 300, "alt": "menu.jpg"}]
    assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/png"
    assert hashlib.sha256(thumb.content).hexdigest() == shown[0]["sha256"]
    assert Image.open(io.BytesIO(thumb.content)).size == (1429, 804)
    assert foreign.status_code == 404

    # The next question (standard profile) sends the earlier images again, read back from S3.
    assert later.status_code == 200 and parse_sse(later.text)[-1][1]["reason"] == "complete"
    earlier = model.requests[1].messages[0]
    assert [i.sha256 for i in earlier.images] == [i.sha256 for i in asked.images]
    assert earlier.images[0].data == base64.b64decode(base64.b64encode(asked.images[0].data))


async def test_deleting_the_conversation_deletes_its_images(make_env, bucket):
    env = make_env(ScriptedModel([Step(text="An answer.")], model_id=SONNET))
    async with env.client() as c:
        r = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM}, **form())
        conv = parse_sse(r.text)[0][1]["conversation_id"]
        assert len(stored_keys(bucket)) == 1
        deleted = await c.delete(f"/api/conversations/{conv}", headers=env.token("alice"))
    assert deleted.status_code == 200 and deleted.json()["deleted"]["images"] == 1
    assert stored_keys(bucket) == []


def small_limits(settings, monkeypatch, **limits):
    for name, value in limits.items():
        monkeypatch.setattr(settings, name, value)


@pytest.mark.parametrize("case, expected", [
    ({"images": [("shot.png", b"GIF89a? no, just text")]}, 'image 1 ("shot.png") is not a PNG, JPEG, WebP or GIF image'),
    ({"images": [("shot.png", picture(800, 600)[:3000])]}, 'image 1 ("shot.png") is damaged or truncated'),
    ({"images": [("tiny.png", bomb_png())]}, "refused as a decompression bomb"),
    ({"images": [(f"{i}.png", picture(30, 30)) for i in range(6)]}, "6 images: at most 5 per question"),
    ({"images": [("a.png", picture(30, 30))], "alts": ["a", "b"]}, "2 alt texts for 1 images"),
    ({"images": [("a.png", picture(30, 30))], "mood": "curious"}, "mood: not allowed"),
    ({"images": [("a.png", picture(30, 30))], "alts": ["x" * 301]}, "alt text is over 300 characters"),
])
async def test_a_bad_file_is_400_with_a_reason_before_any_model_call_storing_nothing(make_env, bucket, case, expected):
    env = make_env(ScriptedModel([Step(text="never")], model_id=SONNET))
    async with env.client() as c:
        r = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM}, **form(**case))
        listed = (await c.get("/api/conversations", headers=env.token("alice"))).json()
    assert r.status_code == 400, r.text
    assert expected in r.json()["error"]["message"]
    assert env.model.calls == 0
    assert stored_keys(bucket) == [] and listed["conversations"] == []


def noise_png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((width, height), 60).convert("RGB").save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("limits, size, expected", [
    ({"max_image_pixels": 1_000_000}, None, "is 1200 × 1000 pixels (1.2 megapixels), over the limit of 1 megapixels"),
    ({"max_image_bytes": 4096}, (100, 100), "over the limit of 4 KiB per image"),
    ({"max_images_bytes": 8192}, (60, 60), "over the limit of 8 KiB per question"),
])
async def test_the_limits_are_settings(make_env, bucket, settings, monkeypatch, limits, size, expected):
    small_limits(settings, monkeypatch, **limits)
    env = make_env(ScriptedModel([Step(text="never")], model_id=SONNET))
    data = picture(1200, 1000) if size is None else noise_png(*size)
    async with env.client() as c:
        r = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM}, **form(images=[("a.png", data), ("b.png", data)]))
    assert r.status_code == 400 and expected in r.json()["error"]["message"], r.text
    assert env.model.calls == 0 and stored_keys(bucket) == []


async def test_a_model_without_a_published_bound_refuses_images(make_env, bucket):
    env = make_env(ScriptedModel([Step(text="never")]))  # "scripted": priced, but no image bound
    async with env.client() as c:
        r = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM}, **form())
        words = await c.post("/api/chat", headers=env.token("alice"), json={"stream": True, "message": "In words, then?"})
    assert r.status_code == 400
    assert r.json()["error"] == {"code": "images-not-accepted", "message":
                                 "no published finite image token bound for scripted: ask in words, or configure a model that accepts images"}
    assert words.status_code == 200  # the same model answers a question without images
    assert env.model.calls == 1 and stored_keys(bucket) == []


async def test_the_offline_answerer_refuses_images_and_says_so(dynamo, settings, bucket):
    import httpx

    from chat_function.app import create_app
    from groundchat.services import Services

    services = Services(settings=settings, dynamo=dynamo)  # GROUNDCHAT_MODEL=offline
    services.users.table.put_item(Item={"user_id": "alice", "grants": {"chat.use"}})
    from groundchat.auth.tokens import issue_dev_token

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(services)), base_url="http://t") as c:
        r = await c.post("/api/chat", headers={"authorization": f"Bearer {issue_dev_token(settings, 'alice')}"}, **form())
    assert r.status_code == 400 and r.json()["error"]["code"] == "images-not-accepted"
    assert r.json()["error"]["message"].startswith("The offline answerer reads no images")


async def test_the_checks_keep_their_order_for_a_question_with_images(make_env, bucket):
    env = make_env(ScriptedModel([Step(text="never")], model_id=SONNET))
    bad = form(images=[("x.png", b"not an image")])
    async with env.client() as c:
        anonymous = await c.post("/api/chat", **bad)
        unknown = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM}, **form(conversation_id="0" * 32))
        broken = await c.post("/api/chat", headers={**env.token("alice"), "content-type": "multipart/form-data; boundary=xyz"},
                              content=b"--xyz\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nq")
        huge = await c.post("/api/chat", headers={**env.token("alice"), **ASKS_FOR_THE_STREAM}, **form(images=[("a.png", b"0" * (9 * 1024 * 1024))]))
    assert anonymous.status_code == 401  # no caller comes before a bad file
    assert unknown.status_code == 404  # a good image does not open someone else's conversation
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "bad-request"
    assert huge.status_code == 413 and "fewer or smaller images" in huge.json()["error"]["message"]
    assert env.model.calls == 0 and stored_keys(bucket) == []


async def test_a_multipart_question_without_images_is_answered_like_json(make_env, bucket):
    env = make_env(ScriptedModel([Step(text="Context A.")], model_id=SONNET))
    body = (b"--xyz\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nWhich context is best?\r\n--xyz--\r\n")
    async with env.client() as c:
        r = await c.post("/api/chat", content=body,
                         headers={**env.token("alice"), **ASKS_FOR_THE_STREAM, "content-type": "multipart/form-data; boundary=xyz"})
    assert r.status_code == 200 and parse_sse(r.text)[-1][1]["reason"] == "complete"
    assert env.model.requests[0].messages[-1].content == "Which context is best?"
    assert env.model.requests[0].messages[-1].images == [] and stored_keys(bucket) == []


async def test_the_page_can_ask_whether_images_are_taken_and_the_limits(make_env, bucket):
    async with make_env(ScriptedModel([], model_id=SONNET)).client() as c:
        taking = (await c.get("/api/chat/images")).json()
    async with make_env(ScriptedModel([])).client() as c:
        refusing = (await c.get("/api/chat/images")).json()
    assert taking == {"accepted": True, "reason": None, "max_images": 5, "max_image_bytes": 3 * 1024 * 1024,
                      "max_images_bytes": 4 * 1024 * 1024, "max_image_pixels": 25_000_000}
    assert refusing["accepted"] is False and refusing["reason"].startswith("no published finite image token bound for scripted")
