"""A question's images through both adapters, checked by the strict provider checkers on what is
really sent: Converse `image` blocks with bytes (through a real botocore client), chat completions
`image_url` parts with a data URL; and the checkers refuse what the providers refuse."""
from __future__ import annotations

import base64
import hashlib

import pytest

from groundchat.attachments.uploads import Upload
from groundchat.attachments.validation import ImageLimits, prepare_images
from groundchat.models.bedrock import BedrockModel, to_converse_request
from groundchat.models.messages import Message, ModelRequest, TextDelta, ToolSpec
from groundchat.models.openai_compat import OpenAICompatModel, to_openai_messages
from groundchat.models.retry import RetryPolicy
from groundchat_testkit.providers import (
    BedrockRuleBroken,
    OpenAIRuleBroken,
    assert_bedrock_messages,
    assert_bedrock_request,
    assert_openai_messages,
)
from tests.attachments.images import picture
import tests.models.provider_recordings as rec

SONNET = "anthropic.claude-3-5-sonnet-20241022-v2:0"
SPECS = [ToolSpec(name="lookup", description="Look something up.", input_schema={"type": "object", "properties": {}})]


def shots():
    return prepare_images([Upload("button.png", picture(1920, 1080), alt="The submit button"),
                           Upload("photo.jpg", picture(640, 480, "JPEG"))], ImageLimits())


def asking(images, history=()) -> ModelRequest:
    return ModelRequest(system="Answer from tools.", tools=SPECS, max_output_tokens=500,
                        messages=[*history, Message(role="user", content="Why does axe flag this button?", images=images)])


def tool_round() -> list[Message]:
    return [Message(role="user", content="Which context is best?"),
            Message(role="assistant", content="", tool_calls=[{"id": "call_1", "name": "lookup", "args": {}}]),
            Message(role="tool", content='{"best": "A"}', tool_call_id="call_1", name="lookup")]


async def test_bedrock_sends_image_blocks_with_the_bytes_through_botocore():
    images = shots()
    replay = rec.BedrockReplay([rec.text_delta(0, "Its contrast is 2.1:1."), rec.block_stop(0),
                                rec.message_stop("end_turn"), rec.metadata(1800, 9)])
    model = BedrockModel(SONNET, client=replay.client, retry=RetryPolicy(attempts=1))
    events = [e async for e in model(asking(images))]
    assert events[0] == TextDelta(text="Its contrast is 2.1:1.")

    content = replay.sent[0]["messages"][0]["content"]  # as it went over the wire (bytes in base64)
    assert [list(block) for block in content] == [["text"], ["image"], ["text"], ["image"], ["text"]]
    assert content[0] == {"text": "Image 1: The submit button"} and content[2] == {"text": "Image 2: photo.jpg"}
    assert content[1]["image"]["format"] == "png" and content[3]["image"]["format"] == "jpeg"
    sent = base64.b64decode(content[1]["image"]["source"]["bytes"])
    assert hashlib.sha256(sent).hexdigest() == images[0].sha256
    assert content[4] == {"text": "Why does axe flag this button?"}


def test_bedrock_request_with_images_after_a_tool_round_passes_the_strict_checker():
    body = to_converse_request(asking(shots(), tool_round()), SONNET)
    assert_bedrock_request(body)  # botocore's validator, then the ordering and image rules
    # The question with its images joins the tool result in one user turn (roles alternate).
    last = body["messages"][-1]["content"]
    assert "toolResult" in last[0] and [k for b in last for k in b].count("image") == 2


def test_bedrock_checker_refuses_what_converse_refuses():
    image = to_converse_request(asking(shots()), SONNET)["messages"][0]["content"][1]
    raw = image["image"]["source"]["bytes"]

    def user_turn(block) -> list[dict]:
        return [{"role": "user", "content": [{"text": "q"}, block]}]

    for block, words in [
        ({"image": {"format": "jpeg", "source": {"bytes": raw}}}, "the bytes are PNG, the block says JPEG"),
        ({"image": {"format": "png", "source": {"bytes": b"not an image"}}}, "not an image"),
        ({"image": {"format": "png", "source": {"bytes": base64.b64encode(raw).decode()}}}, "raw bytes"),
        ({"image": {"format": "bmp", "source": {"bytes": raw}}}, "format"),
    ]:
        with pytest.raises(BedrockRuleBroken, match=words):
            assert_bedrock_messages(user_turn(block))
    with pytest.raises(BedrockRuleBroken, match="an image in a assistant turn"):
        assert_bedrock_messages([{"role": "user", "content": [{"text": "q"}]}, {"role": "assistant", "content": [image]}])
    with pytest.raises(BedrockRuleBroken, match="21 images in one request"):
        assert_bedrock_messages([{"role": "user", "content": [image] * 21}])


async def test_openai_sends_image_url_parts_with_data_urls():
    images = shots()
    replay = rec.OpenAIReplay((200, rec.sse(rec.chunk({"content": "Low contrast."}, finish="stop"),
                                            rec.chunk(None, usage={"prompt_tokens": 2000, "completion_tokens": 3})), {}))
    model = OpenAICompatModel("gpt-4.1-mini", base_url="http://gw/v1", api_key="k", transport=replay.transport,
                              retry=RetryPolicy(attempts=1))
    assert [e async for e in model(asking(images))][0] == TextDelta(text="Low contrast.")

    body = replay.bodies()[0]
    assert_openai_messages(body["messages"])
    parts = body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert parts[1]["image_url"]["detail"] == "high"
    head, _, data = parts[1]["image_url"]["url"].partition(",")
    assert head == "data:image/png;base64" and hashlib.sha256(base64.b64decode(data)).hexdigest() == images[0].sha256
    assert parts[3]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert parts[4] == {"type": "text", "text": "Why does axe flag this button?"}


def test_openai_request_with_images_after_a_tool_round_passes_the_strict_checker():
    body = to_openai_messages(asking(shots(), tool_round()), "gpt-4.1-mini")
    assert_openai_messages(body["messages"])
    assert isinstance(body["messages"][1]["content"], str)  # a question without images stays a string


def test_openai_checker_refuses_what_chat_completions_refuses():
    good = to_openai_messages(asking(shots()), "gpt-4.1-mini")["messages"][1]["content"][1]

    def with_part(part) -> list[dict]:
        return [{"role": "user", "content": [{"type": "text", "text": "q"}, part]}]

    for part, words in [
        ({"type": "image_url", "image_url": {"url": "https://example.org/x.png", "detail": "high"}}, "data URL"),
        ({"type": "image_url", "image_url": {"url": "data:image/svg+xml;base64,PHN2Zz4=", "detail": "high"}}, "data URL"),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@", "detail": "high"}}, "not base64"),
        ({"type": "image_url", "image_url": {"url": good["image_url"]["url"].replace("image/png", "image/jpeg", 1)}}, "the bytes are PNG"),
        ({"type": "image_url", "image_url": {**good["image_url"], "detail": "max"}}, "detail"),
        ({"type": "input_image", "image_url": good["image_url"]}, "text or image_url"),
        ({"type": "text", "text": " "}, "with text"),
    ]:
        with pytest.raises(OpenAIRuleBroken, match=words):
            assert_openai_messages(with_part(part))
    with pytest.raises(OpenAIRuleBroken, match="not a string"):
        assert_openai_messages([{"role": "user", "content": "q"}, {"role": "assistant", "content": [good]}])


def test_an_image_without_its_bytes_is_said_in_words_by_both_adapters():
    (image,) = shots()[:1]
    missing = image.model_copy(update={"data": None})
    bedrock = to_converse_request(asking([missing]), SONNET)
    assert_bedrock_request(bedrock)
    assert bedrock["messages"][0]["content"][0] == {"text": "[image: The submit button (1429×804 px), not available]"}
    openai = to_openai_messages(asking([missing]), "gpt-4.1-mini")
    assert_openai_messages(openai["messages"])
    assert openai["messages"][1]["content"][0]["text"].endswith("not available]")


async def test_the_offline_answerer_reads_no_images_and_says_so():
    from groundchat.offline.answerer import IMAGES_REFUSED, OfflineAnswerer

    events = [e async for e in OfflineAnswerer()(asking(shots()))]
    assert events[0] == TextDelta(text=IMAGES_REFUSED + "\n\n" + events[0].text.split("\n\n", 1)[1])
    assert "offline answerer" in events[0].text and events[-1].reason == "end_turn"
    assert OfflineAnswerer.images_refused == IMAGES_REFUSED  # what refuses its images before it runs
