"""Images in S3, one prefix per conversation: `conversations/<conversation id>/<sha256>.<ext>`.

The prefix makes a conversation's images one listing to delete; the hash makes the same image sent
twice in one conversation one object. The bucket is private and encrypted (template.yaml); its
lifecycle rule expires objects `retention_days` after they were last written, and every answer in
a conversation with images writes them again in place (`renew`), so they live exactly as long as
the conversation, whose expiry also moves with each answer. Locally the endpoint is moto's S3.
"""
from __future__ import annotations

import asyncio
import logging
from functools import cached_property, partial
from typing import TYPE_CHECKING, Callable, TypeVar

from groundchat.models.messages import ImageRef

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from groundchat.config import Settings

log = logging.getLogger("groundchat.attachments")

T = TypeVar("T")
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def conversation_prefix(conversation_id: str) -> str:
    return f"conversations/{conversation_id}/"


def image_key(conversation_id: str, image: ImageRef) -> str:
    return f"{conversation_prefix(conversation_id)}{image.sha256}.{_EXTENSIONS[image.media_type]}"


class ImageStore:
    """The images bucket. The client is built on first use: a request that stores no image never
    loads S3's service model."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.bucket = settings.images_bucket

    @cached_property
    def client(self) -> BaseClient:
        import boto3
        from botocore.config import Config

        kwargs: dict[str, str | Config] = {
            "region_name": self.settings.aws_region,
            "config": Config(retries={"max_attempts": 4, "mode": "standard"},
                             s3={"addressing_style": "path"} if self.settings.images_endpoint else None),
        }
        if self.settings.images_endpoint:
            kwargs["endpoint_url"] = self.settings.images_endpoint
        return boto3.client("s3", **kwargs)

    async def _run(self, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        return await asyncio.to_thread(partial(fn, *args, **kwargs))

    async def put(self, conversation_id: str, image: ImageRef) -> str:
        if image.data is None:
            raise ValueError(f"image {image.sha256} has no bytes to store")
        key = image_key(conversation_id, image)
        await self._run(self.client.put_object, Bucket=self.bucket, Key=key, Body=image.data,
                        ContentType=image.media_type, ServerSideEncryption="AES256")
        return key

    async def read(self, key: str) -> bytes | None:
        """The bytes, or None when the object is gone (expired or deleted)."""
        from botocore.exceptions import ClientError

        try:
            response = await self._run(self.client.get_object, Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return None
            raise
        return await self._run(response["Body"].read)

    async def keys(self, conversation_id: str) -> list[str]:
        paginator = self.client.get_paginator("list_objects_v2")
        pages = await self._run(lambda: list(paginator.paginate(Bucket=self.bucket, Prefix=conversation_prefix(conversation_id))))
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    async def delete_conversation(self, conversation_id: str) -> int:
        """Deletes every image of the conversation; returns how many there were."""
        keys = await self.keys(conversation_id)
        for start in range(0, len(keys), 1000):  # DeleteObjects takes at most 1000 keys
            batch = [{"Key": k} for k in keys[start:start + 1000]]
            await self._run(self.client.delete_objects, Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
        return len(keys)

    async def expire_older_than(self, days: int, now: float) -> int:
        """The bucket's lifecycle rule where none runs (the local stack): S3 expires an object
        `days` after it was last written, at the following midnight UTC. Returns how many went."""
        from datetime import datetime, timedelta, timezone

        today = datetime.fromtimestamp(now, timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        paginator = self.client.get_paginator("list_objects_v2")
        pages = await self._run(lambda: list(paginator.paginate(Bucket=self.bucket)))
        due = [{"Key": item["Key"]} for page in pages for item in page.get("Contents", [])
               if item["LastModified"].astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
               + timedelta(days=days + 1) <= today]
        for start in range(0, len(due), 1000):
            await self._run(self.client.delete_objects, Bucket=self.bucket, Delete={"Objects": due[start:start + 1000], "Quiet": True})
        return len(due)

    async def renew(self, conversation_id: str) -> int:
        """Writes each image of the conversation again in place, which restarts its lifecycle
        clock: the conversation just had an answer, so its images live another retention period."""
        keys = await self.keys(conversation_id)
        for key in keys:
            await self._run(self.client.copy_object, Bucket=self.bucket, Key=key, CopySource={"Bucket": self.bucket, "Key": key},
                            MetadataDirective="REPLACE", ServerSideEncryption="AES256",
                            ContentType=_media_type_of(key))
        return len(keys)

    def ensure_bucket(self) -> bool:
        """Creates the bucket if it is missing (the local stack and tests; in AWS the stack owns
        it). Returns whether it was created."""
        from botocore.exceptions import ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
            return False
        except ClientError:
            pass
        region = self.settings.aws_region
        extra = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        self.client.create_bucket(Bucket=self.bucket, **extra)
        return True


def _media_type_of(key: str) -> str:
    extension = key.rsplit(".", 1)[-1]
    return next((media for media, ext in _EXTENSIONS.items() if ext == extension), "application/octet-stream")
