"""The local stack's S3 (moto, beside its DynamoDB) keeps the images bucket on disk: an image a
conversation stored is still there after a restart, a delete stays deleted, --reset-state empties it."""
from __future__ import annotations

import asyncio

import pytest

from groundchat.attachments.storage import ImageStore, image_key
from groundchat.attachments.uploads import Upload
from groundchat.attachments.validation import ImageLimits, prepare_images
from groundchat.config import get_settings
from groundchat_cli.moto_store import LocalDynamo
from groundchat_cli.stack_address import s3_state_dir
from tests.attachments.images import picture


@pytest.fixture
def stack(tmp_path):
    home = tmp_path / "home"
    started: list[LocalDynamo] = []

    def start(reset: bool = False) -> ImageStore:
        for server in started:
            server.stop()
        local = LocalDynamo(home / "dynamodb-8000.log", reset=reset, s3_root=home / "s3-8000").start()
        started.append(local)
        return ImageStore(get_settings().model_copy(update={"images_endpoint": local.endpoint}))

    yield start
    for server in started:
        server.stop()


def test_the_images_bucket_survives_a_restart(stack, settings):
    (a, b) = prepare_images([Upload("a.png", picture(80, 60)), Upload("b.png", picture(60, 80))], ImageLimits())
    store = stack()
    assert store.ensure_bucket() is True
    asyncio.run(store.put("c1", a))
    asyncio.run(store.put("c2", b))
    assert asyncio.run(store.renew("c1")) == 1  # a copy in place is a write too

    store = stack()  # a restart: the state is loaded from the files
    assert store.ensure_bucket() is False
    assert asyncio.run(store.read(image_key("c1", a))) == a.data
    assert asyncio.run(store.delete_conversation("c2")) == 1

    store = stack()
    assert asyncio.run(store.read(image_key("c2", b))) is None  # the delete was kept
    assert asyncio.run(store.read(image_key("c1", a))) == a.data
    assert sorted(p.name for p in s3_state_dir(settings, 8000).rglob("*.obj")) == \
        [f"{a.sha256}.png.obj"]

    store = stack(reset=True)  # groundchat serve --reset-state
    assert store.ensure_bucket() is True
    assert asyncio.run(store.read(image_key("c1", a))) is None
