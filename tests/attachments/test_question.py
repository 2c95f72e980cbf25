"""The one call the answer makes for a question's images: the envelope, the model, each file;
images leave stamped with the model's bound, and the estimate counts them at it."""
import pytest

from groundchat.attachments.question import prepare_question_images
from groundchat.attachments.uploads import ImagesRefused, Upload, UploadProblem
from groundchat.models.messages import Message, ModelRequest
from groundchat.offline.answerer import OfflineAnswerer
from groundchat.spending.token_estimate import estimate_request_tokens
from groundchat_testkit.scripted import ScriptedModel
from tests.attachments.images import picture

SONNET = "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0"


async def refused(settings, model, uploads) -> ImagesRefused:
    with pytest.raises(ImagesRefused) as caught:
        await prepare_question_images(settings, model, uploads)
    return caught.value


async def test_images_are_stamped_with_the_models_bound(settings):
    images = await prepare_question_images(settings, ScriptedModel([], model_id=SONNET), [Upload("a.png", picture(1920, 1080))])
    assert [(i.width, i.height, i.token_bound) for i in images] == [(1429, 804, 1532)]  # ⌈1429 × 804 / 750⌉
    gpt = await prepare_question_images(settings, ScriptedModel([], model_id="openai:gpt-4.1-mini"), [Upload("a.png", picture(1920, 1080))])
    assert gpt[0].token_bound == 1896  # 45 × 26 patches × 1.62, rounded up


async def test_a_model_without_a_bound_refuses_images_and_says_why(settings):
    exc = await refused(settings, ScriptedModel([], model_id="bedrock:amazon.nova-pro-v1:0"), [Upload("a.png", picture(20, 20))])
    assert exc.code == "images-not-accepted"
    assert exc.message.startswith("no published finite image token bound for bedrock:amazon.nova-pro-v1:0")


async def test_the_offline_answerer_accepts_no_images_and_says_so(settings):
    exc = await refused(settings, OfflineAnswerer(settings), [Upload("a.png", picture(20, 20))])
    assert exc.code == "images-not-accepted"
    assert exc.message.startswith("The offline answerer reads no images")


async def test_a_model_refusal_comes_before_any_decoding(settings):
    # Not an image at all, and still the model's refusal: nothing of the file was looked at.
    exc = await refused(settings, OfflineAnswerer(settings), [Upload("a.png", b"not an image")])
    assert exc.code == "images-not-accepted"


async def test_an_unreadable_envelope_is_a_bad_request(settings):
    exc = await refused(settings, ScriptedModel([], model_id=SONNET), UploadProblem("the multipart body cannot be read"))
    assert (exc.code, exc.message) == ("bad-request", "the multipart body cannot be read")


async def test_no_images_is_no_work(settings):
    assert await prepare_question_images(settings, OfflineAnswerer(settings), []) == []


async def test_the_reservation_counts_each_image_at_its_stamped_bound(settings):
    images = await prepare_question_images(settings, ScriptedModel([], model_id=SONNET), [Upload("a.png", picture(1920, 1080))] * 2)
    bare = ModelRequest(system="s", messages=[Message(role="user", content="Why does axe flag this?")], tools=[])
    with_images = ModelRequest(system="s", messages=[Message(role="user", content="Why does axe flag this?", images=images)], tools=[])
    added = estimate_request_tokens(with_images) - estimate_request_tokens(bare)
    # Both images at 1532 each, plus their description as text (hash, size, alt), never their bytes.
    assert 2 * 1532 < added < 2 * 1532 + 200
    unstamped = [i.model_copy(update={"token_bound": None}) for i in images]
    worst = estimate_request_tokens(ModelRequest(system="s", messages=[Message(role="user", content="Why does axe flag this?", images=unstamped)], tools=[]))
    assert worst - estimate_request_tokens(bare) > 2 * 36835  # no model named: the dearest entry (gpt-4o-mini's tiles)
