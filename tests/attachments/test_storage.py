"""Images in S3 (moto): by conversation and hash, referenced from the stored message, renewed as
the conversation lives on, deleted with it; and what a model sees of earlier images."""
import json

from groundchat.attachments.history_images import history_for_model
from groundchat.attachments.storage import image_key
from groundchat.attachments.uploads import Upload
from groundchat.attachments.validation import ImageLimits, prepare_images
from groundchat.models.messages import Message
from groundchat.offline.answerer import OfflineAnswerer
from groundchat.store.conversation_images import read_image
from groundchat.store.conversations import ConversationStore, new_conversation_id, public_message
from groundchat_testkit.scripted import ScriptedModel
from tests.attachments.images import picture

SONNET = "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0"


def images(*sizes):
    return prepare_images([Upload(f"shot{i}.png", picture(w, h)) for i, (w, h) in enumerate(sizes, 1)], ImageLimits(max_images=10))


async def commit(store, conversation_id, question, existing=None, run_id="r1"):
    if existing is not None:
        await store.claim(conversation_id, run_id)
        existing = await store.get(conversation_id)
    await store.commit_exchange(conversation_id=conversation_id, owner="alice", run_id=run_id, existing=existing,
                                messages=[question, Message(role="assistant", content="An answer.")], annotations={}, title="q")


def objects(image_store, conversation_id=""):
    listed = image_store.client.list_objects_v2(Bucket=image_store.bucket, Prefix=f"conversations/{conversation_id}")
    return sorted(o["Key"] for o in listed.get("Contents", []))


async def test_a_committed_question_stores_its_images_by_key_and_hash(dynamo, image_store):
    store = ConversationStore(dynamo)
    cid = new_conversation_id()
    a, b = images((300, 200), (120, 80))
    await commit(store, cid, Message(role="user", content="Why is this flagged?", images=[a, b, a]))

    assert objects(image_store, cid) == sorted([image_key(cid, a), image_key(cid, b)])  # the same image once
    body = image_store.client.get_object(Bucket=image_store.bucket, Key=image_key(cid, a))
    assert body["Body"].read() == a.data and body["ContentType"] == "image/png"
    assert body["ServerSideEncryption"] == "AES256"

    items = await store.read_items(cid)
    refs = json.loads(items[0]["images"])
    assert [r["sha256"] for r in refs] == [a.sha256, b.sha256, a.sha256]
    assert refs[0] == {"key": f"conversations/{cid}/{a.sha256}.png", "sha256": a.sha256, "media_type": "image/png",
                       "width": 300, "height": 200, "alt": "shot1.png"}
    assert "images" not in items[1] and "images" not in public_message(items[1])  # the answer has none
    shown = public_message(items[0])["images"]
    assert shown[1] == {"sha256": b.sha256, "media_type": "image/png", "width": 120, "height": 80, "alt": "shot2.png"}
    assert (await store.get(cid))["has_images"] is True

    history = await store.read_history(cid)
    assert [i.key for i in history[0].images] == [r["key"] for r in refs] and history[0].images[0].data is None
    assert await read_image(store, cid, b.sha256) == (b.data, "image/png")
    assert await read_image(store, cid, "0" * 64) is None


async def test_a_conversation_without_images_writes_nothing_to_s3(dynamo, image_store):
    store = ConversationStore(dynamo)
    cid = new_conversation_id()
    await commit(store, cid, Message(role="user", content="Which context is best?"))
    assert objects(image_store) == []
    assert "has_images" not in await store.get(cid) and "images" not in (await store.read_items(cid))[0]


async def test_images_are_renewed_when_the_conversation_expiry_moves_and_deleted_with_it(dynamo, image_store, monkeypatch):
    store = ConversationStore(dynamo)
    cid = new_conversation_id()
    (a,) = images((64, 64))
    await commit(store, cid, Message(role="user", content="q1", images=[a]))
    renewed = []
    monkeypatch.setattr(type(image_store), "renew", lambda self, c: _record(renewed, c))
    await commit(store, cid, Message(role="user", content="q2"), existing=True, run_id="r2")
    assert renewed == []  # the same day: the expiry did not move, nothing to renew
    # The next answer, a day later: the conversation's expiry moves, and its images are written again.
    expires = int((await store.get(cid))["expires_at"])
    monkeypatch.setattr(store, "_expiry", lambda: expires + 86_400)
    await commit(store, cid, Message(role="user", content="q3"), existing=True, run_id="r3")
    assert renewed == [cid]

    assert await store.delete_images(cid) == 1
    assert objects(image_store, cid) == []


async def _record(calls, conversation_id):
    calls.append(conversation_id)
    return 1


async def test_renew_writes_each_image_again_in_place(dynamo, image_store):
    cid = new_conversation_id()
    (a,) = images((64, 64))
    await image_store.put(cid, a)
    assert await image_store.renew(cid) == 1
    head = image_store.client.head_object(Bucket=image_store.bucket, Key=image_key(cid, a))
    assert head["ContentType"] == "image/png" and head["ServerSideEncryption"] == "AES256"
    assert await image_store.read(image_key(cid, a)) == a.data


async def test_earlier_images_are_sent_again_up_to_the_profiles_number(dynamo, image_store):
    store = ConversationStore(dynamo)
    cid = new_conversation_id()
    shots = images(*[(40 + i, 40) for i in range(7)])
    await commit(store, cid, Message(role="user", content="first", images=shots[:4]))
    await commit(store, cid, Message(role="user", content="second", images=shots[4:]), existing=True, run_id="r2")
    history = await store.read_history(cid)
    model = ScriptedModel([], model_id=SONNET)

    fitted = await history_for_model(history, model, "standard", store.images)  # the latest 5 again
    sent = [i for m in fitted for i in m.images]
    assert [i.sha256 for i in sent] == [s.sha256 for s in shots[2:]]
    assert all(i.data == s.data and i.token_bound == -(-(s.width * s.height) // 750) for i, s in zip(sent, shots[2:]))
    assert fitted[0].content == "first\n[image: shot1.png (40×40 px), attached earlier, not sent again]\n" \
                                "[image: shot2.png (41×40 px), attached earlier, not sent again]"
    assert history[0].images[0].data is None  # the stored turns are never changed

    visitor = await history_for_model(history, model, "visitor-qa", store.images)
    assert [i for m in visitor for i in m.images] == [] and visitor[2].content.count("[image: ") == 3

    offline = await history_for_model(history, OfflineAnswerer(), "long-authoring", store.images)
    assert [i for m in offline for i in m.images] == []  # a model without a bound sees words only

    await store.delete_images(cid)
    gone = await history_for_model(history, model, "standard", store.images)
    assert [i for m in gone for i in m.images] == [] and "no longer stored" in gone[2].content


async def test_a_history_without_images_is_returned_as_it_is(dynamo, image_store):
    history = [Message(role="user", content="q"), Message(role="assistant", content="a")]
    assert await history_for_model(history, OfflineAnswerer(), "standard", None) is history


async def test_the_local_sweep_expires_images_as_the_buckets_lifecycle_rule_does(dynamo, image_store):
    """S3 expires an object `days` after it was last written, at the following midnight UTC; the
    local stack has no lifecycle rule, so its sweep applies the same one."""
    from datetime import datetime, timezone

    from sweep_function.local import sweep_once

    store = ConversationStore(dynamo)
    cid = new_conversation_id()
    (a,) = images((300, 200))
    await commit(store, cid, Message(role="user", content="Why is this flagged?", images=[a]))
    written = image_store.client.head_object(Bucket=image_store.bucket, Key=objects(image_store, cid)[0])["LastModified"]
    midnight_after = datetime(written.year, written.month, written.day, tzinfo=timezone.utc).timestamp() + 86400

    import asyncio

    kept = await asyncio.to_thread(sweep_once, dynamo, midnight_after + 29 * 86400 - 1, image_store, 30)
    assert kept["expired"]["images"] == 0 and len(objects(image_store, cid)) == 1
    gone = await asyncio.to_thread(sweep_once, dynamo, midnight_after + 30 * 86400, image_store, 30)
    assert gone["expired"]["images"] == 1 and objects(image_store, cid) == []
