"""An images bucket on moto's S3, beside the moto DynamoDB of `dynamo`."""
import pytest


@pytest.fixture
def image_store(dynamo, settings):
    from groundchat.attachments.storage import ImageStore

    store = ImageStore(settings)
    assert store.ensure_bucket() is True
    return store
