"""Local sign-in without pasting a token: in dev auth mode only, the chat page asks this route for
a dev token for a local user (the dev user by default) and keeps it in the tab.

The routes exist only when `GROUNDCHAT_AUTH_MODE=dev` in private mode; with `oidc`, or in public
mode, they are never added, so they answer 404 like any unknown address. Dev mode trusts whoever reaches the server, exactly as
`groundchat token USER` does for whoever can read the dev secret: the local stack listens on
127.0.0.1, and the deployed stack runs in `oidc` mode.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from chat_function.callers import services_of
from chat_function.errors import error
from chat_function.openapi import ALWAYS, refusals
from groundchat.auth.tokens import issue_dev_token

SIGN_IN_PATH = "/api/dev/sign-in"
TOKEN_DAYS = 1  # a tab's sign-in; `groundchat token` stays for scripts that need longer
USER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
MAX_BODY_BYTES = 1024


class DevSignInOffer(BaseModel):
    """What the page needs to offer the one-click sign-in."""

    default_user: str
    users: list[str]


class DevSignedIn(BaseModel):
    token: str
    user: str
    expires_at: int
    permissions: list[str]


def _body_schema() -> dict[str, Any]:
    schema = {"type": "object", "additionalProperties": False,
              "properties": {"user": {"type": "string", "pattern": USER_ID.pattern, "maxLength": 64,
                                      "description": "a local user id; the dev user when left out"}}}
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": schema}}}}


def _ok(model: type[BaseModel]) -> dict[int | str, dict[str, Any]]:
    return {200: {"model": model, "description": "dev mode only (404 in oidc mode)"}}


def add_sign_in_routes(app: FastAPI) -> None:
    """Adds the dev sign-in routes, only when the deployment runs in dev auth mode."""
    settings = app.state.services.settings
    if settings.auth_mode != "dev" or settings.mode == "public":
        # In public mode whoever reaches the page is a visitor with a visitor's permissions and
        # ceiling; a one-click dev token would hand a stranger the dev user's grants.
        return

    @app.get(SIGN_IN_PATH, responses={**_ok(DevSignInOffer), **refusals(*ALWAYS)})
    async def sign_in_offer(request: Request) -> Response:
        """The dev user and the local users who have grants, for the page's user field."""
        services = services_of(request)
        users = [u["user_id"] for u in await services.users.list() if USER_ID.match(u["user_id"])]
        return JSONResponse(DevSignInOffer(default_user=services.settings.dev_user, users=users).model_dump())

    @app.post(SIGN_IN_PATH, openapi_extra=_body_schema(), responses={**_ok(DevSignedIn), **refusals(400, *ALWAYS)})
    async def sign_in(request: Request) -> Response:
        """A dev token for a local user (1 day), as `groundchat token USER` prints one."""
        services = services_of(request)
        user = _requested_user(await request.body(), services.settings.dev_user)
        if user is None:
            return error(400, "bad-request", "Send {\"user\": \"<local user id>\"} (letters, digits, . _ @ -), or nothing for the dev user.")
        token = issue_dev_token(services.settings, user, days=TOKEN_DAYS)
        permissions = sorted(await services.users.grants(user))
        answer = DevSignedIn(token=token, user=user, expires_at=int(time.time()) + TOKEN_DAYS * 86400, permissions=permissions)
        return JSONResponse(answer.model_dump(), headers={"Cache-Control": "no-store"})


def _requested_user(raw: bytes, default: str) -> str | None:
    """The user the body names, the default for an empty body, None for anything else."""
    if len(raw) > MAX_BODY_BYTES:
        return None
    if not raw.strip():
        return default
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(body, dict) or set(body) - {"user"}:
        return None
    user = body.get("user", default)
    return user if isinstance(user, str) and USER_ID.match(user) else None
