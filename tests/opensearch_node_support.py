"""A real OpenSearch node for the backend contract tests: one per test worker, started the first
time a test asks for it, on a free loopback port, its data in the session's temporary folder.

Where the node cannot be built or started here (no Java or Maven), its tests skip with the one line
that says what to install; under CI=true they fail instead, since CI must run them."""
from __future__ import annotations

import os
import uuid
from contextlib import contextmanager

import pytest


def skip_unless_ci(exc: Exception) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the OpenSearch tests: {exc}")
    pytest.skip(str(exc))


def built_or_skip() -> None:
    """The node's launcher built (once, into the tools cache), or this test skipped (failed under CI)."""
    from groundchat_cli.opensearch_node import NodeUnavailable, build

    try:
        build(say=lambda line: None)
    except NodeUnavailable as exc:
        skip_unless_ci(exc)


def node_or_skip(tmp_path_factory):
    from groundchat_cli.opensearch_node import LocalOpenSearch, NodeUnavailable
    from groundchat_cli.stack_address import free_port

    node = LocalOpenSearch(tmp_path_factory.mktemp("opensearch"), free_port())
    try:
        node.start(say=lambda line: None)
    except NodeUnavailable as exc:
        skip_unless_ci(exc)
    return node


def fresh_alias(prefix: str = "contract") -> str:
    """An alias of one test's own, so tests sharing the node never see each other's indexes."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@contextmanager
def index_blocked(client, index: str, block: str):
    """`index.blocks.<block>` set on an index for the block's duration, then cleared: what a node
    does to an index (a read block, a full disk's `read_only_allow_delete`) that no fake decides."""
    client.indices.put_settings(index=index, body={f"index.blocks.{block}": True})
    try:
        yield
    finally:
        client.indices.put_settings(index=index, body={f"index.blocks.{block}": None})
