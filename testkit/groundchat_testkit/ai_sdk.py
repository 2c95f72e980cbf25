"""The AI SDK's `ai` package from the npm registry, installed once into a cache outside the clone,
so the tests read our UI message stream with the SDK's own parser, not with ours.

    python -m groundchat_testkit.ai_sdk          install it if missing; say so if npm is absent

The version is pinned here and nowhere else (zod beside it: the SDK's peer dependency, pinned too);
each pin lands in its own directory, so a new one installs beside the old. The cache is
$GROUNDCHAT_NODE_TOOLS, else ${XDG_CACHE_HOME:-~/.cache}/groundchat/node.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

AI_VERSION = "5.0.277"
ZOD_VERSION = "4.1.12"
INSTALL_SECONDS = 600


class AiSdkMissing(RuntimeError):
    """npm (or node) is not here, or the install failed: the reason, in one line."""


def cache_root() -> Path:
    if os.environ.get("GROUNDCHAT_NODE_TOOLS"):
        return Path(os.environ["GROUNDCHAT_NODE_TOOLS"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "groundchat" / "node"


def ai_sdk_dir() -> Path:
    """The npm prefix holding `node_modules/ai` at the pinned version."""
    return cache_root() / f"ai-{AI_VERSION}"


def present() -> Path | None:
    done = ai_sdk_dir() / ".complete"
    return ai_sdk_dir() if done.exists() else None


def install() -> Path:
    """The pinned SDK's prefix, installed if missing (idempotent; safe for test workers side by side)."""
    if present():
        return ai_sdk_dir()
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        raise AiSdkMissing("node and npm are needed to install the AI SDK (`ai`) the stream tests read with")
    from filelock import FileLock

    cache_root().mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_root() / f"ai-{AI_VERSION}.lock")):
        if present():  # another worker installed it while this one waited
            return ai_sdk_dir()
        partial = ai_sdk_dir().with_name(ai_sdk_dir().name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            subprocess.run([npm, "install", "--prefix", str(partial), "--save-exact", "--no-audit", "--no-fund",
                            "--loglevel=error", f"ai@{AI_VERSION}", f"zod@{ZOD_VERSION}"],
                           check=True, capture_output=True, text=True, timeout=INSTALL_SECONDS)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(partial, ignore_errors=True)
            detail = getattr(exc, "stderr", "") or str(exc)
            raise AiSdkMissing(f"npm could not install ai@{AI_VERSION}: {detail.strip()[-400:]}") from exc
        shutil.rmtree(ai_sdk_dir(), ignore_errors=True)
        partial.rename(ai_sdk_dir())
        (ai_sdk_dir() / ".complete").touch()
    return ai_sdk_dir()


if __name__ == "__main__":
    try:
        print(f"ai-sdk: ai@{AI_VERSION} in {install()}")
    except AiSdkMissing as missing:
        print(f"ai-sdk: {missing}; the AI SDK stream tests skip without it")
