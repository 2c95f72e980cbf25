"""The AI SDK's `ai` package from the npm registry, installed once into a cache outside the clone,
so the tests read our UI message stream with the SDK's own parser, not with ours.

    python -m groundchat_testkit.ai_sdk          install every major if missing; say so if npm is absent

Two majors are tested: the current one (7) and the one before it (5), which front ends built on it
still run. Each version is pinned here and nowhere else (zod beside it: the SDK's peer dependency,
pinned too); each pin lands in its own directory, so a new one installs beside the old. ai 7 needs
Node 22 or newer and Debian's is 20: the npm package `node` ships a Node 22 binary for this
platform, installed into the same cache and used for that major only. The cache is
$GROUNDCHAT_NODE_TOOLS, else ${XDG_CACHE_HOME:-~/.cache}/groundchat/node.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Major -> the exact `ai` version tested.
AI_VERSIONS = {"5": "5.0.277", "7": "7.0.185"}
CURRENT_MAJOR = "7"
ZOD_VERSION = "4.1.12"
# Majors whose `ai` needs a newer Node than the system's: the `node` npm package's version for them.
NODE_FOR_MAJOR = {"7": "22.23.3"}
INSTALL_SECONDS = 600


class AiSdkMissing(RuntimeError):
    """npm (or node) is not here, or the install failed: the reason, in one line."""


@dataclass(frozen=True)
class AiSdk:
    """One installed major: the npm prefix holding `node_modules/ai`, and the node that runs it."""

    major: str
    prefix: Path
    node: str


def cache_root() -> Path:
    if os.environ.get("GROUNDCHAT_NODE_TOOLS"):
        return Path(os.environ["GROUNDCHAT_NODE_TOOLS"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "groundchat" / "node"


def ai_sdk_dir(major: str = CURRENT_MAJOR) -> Path:
    """The npm prefix holding `node_modules/ai` at the major's pinned version."""
    return cache_root() / f"ai-{AI_VERSIONS[major]}"


def _npm_install(name: str, packages: list[str]) -> Path:
    """`packages` installed into the cache's directory `name` (idempotent; safe for test workers side by side)."""
    target = cache_root() / name
    if (target / ".complete").exists():
        return target
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        raise AiSdkMissing("node and npm are needed to install the AI SDK (`ai`) the stream tests read with")
    from filelock import FileLock

    cache_root().mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_root() / f"{name}.lock")):
        if (target / ".complete").exists():  # another worker installed it while this one waited
            return target
        partial = target.with_name(name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            subprocess.run([npm, "install", "--prefix", str(partial), "--save-exact", "--no-audit", "--no-fund",
                            "--loglevel=error", *packages], check=True, capture_output=True, text=True, timeout=INSTALL_SECONDS)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(partial, ignore_errors=True)
            detail = getattr(exc, "stderr", "") or str(exc)
            raise AiSdkMissing(f"npm could not install {' '.join(packages)}: {detail.strip()[-400:]}") from exc
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
        (target / ".complete").touch()
    return target


def node_for(major: str) -> str:
    """The node that runs this major: the system's, or the npm package's newer one where it needs it."""
    version = NODE_FOR_MAJOR.get(major)
    if version is None:
        node = shutil.which("node")
        if not node:
            raise AiSdkMissing("node is needed to run the AI SDK")
        return node
    prefix = _npm_install(f"node-{version}", [f"node@{version}"])
    binary = prefix / "node_modules" / "node" / "bin" / "node"
    try:
        ran = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise AiSdkMissing(f"the node@{version} package's binary does not run here: {exc}") from exc
    if ran.stdout.strip() != f"v{version}":
        raise AiSdkMissing(f"the node@{version} package runs {ran.stdout.strip()}")
    return str(binary)


def install(major: str = CURRENT_MAJOR) -> AiSdk:
    """The major's SDK and the node that runs it, installed if missing."""
    node = node_for(major)
    prefix = _npm_install(ai_sdk_dir(major).name, [f"ai@{AI_VERSIONS[major]}", f"zod@{ZOD_VERSION}"])
    return AiSdk(major, prefix, node)


if __name__ == "__main__":
    for wanted in AI_VERSIONS:
        try:
            sdk = install(wanted)
            print(f"ai-sdk: ai@{AI_VERSIONS[wanted]} in {sdk.prefix}, run by {sdk.node}")
        except AiSdkMissing as missing:
            print(f"ai-sdk: {missing}; the AI SDK stream tests skip without it")
