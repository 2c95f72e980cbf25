"""The chat app served for real by uvicorn on 127.0.0.1, on moto, with the deployment's own tool
registry over the seeded sample runs and a small document index; and the MCP SDK's own client."""
from __future__ import annotations

import asyncio
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

from groundchat.auth.callers import CHAT_USE, DOCS_READ, RECALL_READ, RUNS_READ, TRACES_READ, VIEWS_SHOW
from groundchat.auth.tokens import issue_dev_token
from groundchat.services import Services

# ana may read everything; dora only the docs (no runs.read: no data tool).
GRANTS = {"ana": [CHAT_USE, RUNS_READ, DOCS_READ, VIEWS_SHOW, TRACES_READ, RECALL_READ], "dora": [DOCS_READ, TRACES_READ]}
# A searched rerank is charged its model's price ($0.001 a query), so a search costs something to cap.
RERANK_MODEL = "bedrock:amazon.rerank-v1:0"


@dataclass
class Served:
    url: str
    services: Services

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {issue_dev_token(self.services.settings, user)}"}

    @asynccontextmanager
    async def session(self, user: str):
        """An MCP client session as `user`: the SDK's Streamable HTTP transport and ClientSession."""
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers=self.headers(user), timeout=30) as http:
            async with streamable_http_client(f"{self.url}/mcp", http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session


def small_docs(tmp_path):
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.service import SearchService
    from tests.corpus_support import WordHashEmbedder
    from tests.search.test_embedded import _build

    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder)
    return SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder)


@pytest.fixture
def serve(dynamo, tmp_path, monkeypatch):
    """`serve(budget_usd=...)`: the app on a free port, with every tool of the catalog."""
    import uvicorn

    from chat_function.app import create_app
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat_cli.localstack import local_server_config
    from groundchat_cli.stack_address import free_port
    from tests.moto_snapshot import sample_loaded

    sample_loaded(dynamo)
    servers = []

    def start(budget_usd: str = "1") -> Served:
        monkeypatch.setenv("GROUNDCHAT_RERANK", RERANK_MODEL)
        monkeypatch.setenv("GROUNDCHAT_BUDGET_USD", budget_usd)
        reset_settings_cache()
        services = Services(settings=get_settings(), dynamo=dynamo, docs_override=small_docs(tmp_path))
        for user, grants in GRANTS.items():
            services.users.table.put_item(Item={"user_id": user, "grants": set(grants)})
        port = free_port()
        server = uvicorn.Server(local_server_config(create_app(services), port))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        return Served(url=f"http://127.0.0.1:{port}", services=services)

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)


async def started(served: Served) -> Served:
    import httpx

    for _ in range(200):
        try:
            async with httpx.AsyncClient() as client:
                await client.get(f"{served.url}/healthz")
            return served
        except httpx.HTTPError:
            await asyncio.sleep(0.05)
    raise RuntimeError("the app did not start")
