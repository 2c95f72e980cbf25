"""At start, the chat publishes the spending settings it enforces (spending/server_settings.py),
so operators' budget commands act on them rather than on their own shell's defaults."""
from __future__ import annotations

import asyncio
import logging

from botocore.exceptions import BotoCoreError, ClientError
from fastapi import FastAPI

from groundchat.spending.server_settings import publish_sync
from groundchat.store.tables import BUDGET

log = logging.getLogger("groundchat.spending")


def publish_at_start(app: FastAPI) -> None:
    async def publish() -> None:
        services = app.state.services
        dynamo = services.dynamo
        try:
            await asyncio.to_thread(publish_sync, dynamo.client, dynamo.name(BUDGET), services.settings)
        except (BotoCoreError, ClientError) as exc:
            # The chat still serves; the operator's commands say no settings were published.
            log.warning("could not publish the spending settings: %s", exc)

    app.router.on_startup.append(publish)
