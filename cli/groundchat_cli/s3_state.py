"""Local S3 state that survives a restart: every object as a file, `<root>/<region>/<bucket>/<key>`.

The local stack serves moto's S3 from the same server as its DynamoDB (one endpoint, every
service). moto keeps S3 in memory; here each bucket created and each object written, copied or
deleted through it is mirrored on disk inside moto's own call, so before the response leaves the
server, an object the client saw stored is in a file (written to a temporary name, fsync'd, then
renamed: a crash leaves the old file or the new one). At the next start the files are loaded back
into moto before the server listens. The folder is the state: no log to replay or compact, since
an object is written whole and never updated in place.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from groundchat_cli.dynamodb_log import fsync_dir

DEFAULT_ACCOUNT = "123456789012"


class S3Mirror:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def bucket_dir(self, region: str, bucket: str) -> Path:
        return self.root / _safe(region) / _safe(bucket)

    def object_file(self, region: str, bucket: str, key: str) -> Path:
        """The file of one object. Named `<last part>.obj` so that keys `a` and `a/b` (a file and
        a folder of the same name) can both be kept."""
        parts = key.split("/")
        if not key or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"an S3 key the local mirror cannot keep as a file: {key!r}")
        path = self.bucket_dir(region, bucket).joinpath(*parts)
        return path.with_name(path.name + ".obj")

    def add_bucket(self, region: str, bucket: str) -> None:
        path = self.bucket_dir(region, bucket)
        path.mkdir(parents=True, exist_ok=True)
        fsync_dir(path.parent)

    def remove_bucket(self, region: str, bucket: str) -> None:
        path = self.bucket_dir(region, bucket)
        if path.is_dir() and not any(path.rglob("*.obj")):
            for folder in sorted((p for p in path.rglob("*") if p.is_dir()), reverse=True):
                folder.rmdir()
            path.rmdir()

    def write(self, region: str, bucket: str, key: str, data: bytes) -> None:
        path = self.object_file(region, bucket, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)

    def remove(self, region: str, bucket: str, key: str) -> None:
        path = self.object_file(region, bucket, key)
        if path.exists():
            path.unlink()
            fsync_dir(path.parent)

    def objects(self) -> list[tuple[str, str, str, Path]]:
        """(region, bucket, key, file) for every object kept; buckets alone as (region, bucket, "", dir)."""
        found: list[tuple[str, str, str, Path]] = []
        if not self.root.exists():
            return found
        for region_dir in sorted(p for p in self.root.iterdir() if p.is_dir()):
            for bucket_dir in sorted(p for p in region_dir.iterdir() if p.is_dir()):
                found.append((region_dir.name, bucket_dir.name, "", bucket_dir))
                for file in sorted(bucket_dir.rglob("*.obj")):
                    key = file.relative_to(bucket_dir).as_posix()[: -len(".obj")]
                    found.append((region_dir.name, bucket_dir.name, key, file))
        return found


def _safe(name: str) -> str:
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"not a bucket or region name: {name!r}")
    return name


# The mirror moto's S3 writes to. moto's backends are one per process, so is this.
_active: S3Mirror | None = None
_lock = threading.Lock()


def activate(mirror: S3Mirror) -> None:
    global _active
    with _lock:
        if _active is not None:
            raise RuntimeError(f"an S3 mirror is already active in this process ({_active.root})")
        _active = mirror


def deactivate(mirror: S3Mirror) -> None:
    global _active
    with _lock:
        if _active is mirror:
            _active = None


def make_moto_s3_durable() -> None:
    """Wraps moto's S3 backend so that buckets and objects reach the active mirror (idempotent).
    Copies and multi-object deletes go through `put_object` and `delete_object` inside moto."""
    from moto.s3.models import S3Backend

    if getattr(S3Backend.put_object, "_mirrored", False):
        return
    put, delete = S3Backend.put_object, S3Backend.delete_object
    create, drop = S3Backend.create_bucket, S3Backend.delete_bucket

    def put_object(self, bucket_name, key_name, value, *args, **kwargs):
        key = put(self, bucket_name, key_name, value, *args, **kwargs)
        if _active is not None:
            _active.write(self.get_bucket(bucket_name).region_name, bucket_name, key_name, bytes(key.value))
        return key

    def delete_object(self, bucket_name, key_name, *args, **kwargs):
        result = delete(self, bucket_name, key_name, *args, **kwargs)
        if _active is not None and self.get_object(bucket_name, key_name) is None:
            _active.remove(self.get_bucket(bucket_name).region_name, bucket_name, key_name)
        return result

    def create_bucket(self, bucket_name, region_name, *args, **kwargs):
        bucket = create(self, bucket_name, region_name, *args, **kwargs)
        if _active is not None:
            _active.add_bucket(region_name, bucket_name)
        return bucket

    def delete_bucket(self, bucket_name, *args, **kwargs):
        region = self.get_bucket(bucket_name).region_name
        result = drop(self, bucket_name, *args, **kwargs)
        if _active is not None:
            _active.remove_bucket(region, bucket_name)
        return result

    put_object._mirrored = True  # type: ignore[attr-defined]
    S3Backend.put_object, S3Backend.delete_object = put_object, delete_object
    S3Backend.create_bucket, S3Backend.delete_bucket = create_bucket, delete_bucket


def reset_moto_s3() -> None:
    from moto.s3.models import s3_backends

    for account in list(s3_backends.values()):
        for backend in list(account.values()):
            backend.reset()


def load(mirror: S3Mirror, account: str = DEFAULT_ACCOUNT) -> int:
    """Empties moto's S3 and loads the mirror into it (before the server listens); returns the
    number of objects loaded. Nothing is mirrored back while loading."""
    from moto.s3.models import s3_backends

    reset_moto_s3()
    backend: Any = s3_backends[account]["aws"]
    count = 0
    for region, bucket, key, path in mirror.objects():
        if not key:
            backend.create_bucket(bucket, region)
            continue
        backend.put_object(bucket, key, path.read_bytes())
        count += 1
    return count
