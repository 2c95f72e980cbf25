"""The after-restore request of the Lambda Web Adapter: under SnapStart the adapter, not this
process, hears that the environment was restored from a snapshot, and tells the app by a POST to
AWS_LWA_SNAPSTART_AFTER_RESTORE_PATH before any traffic (template.yaml). The app then reseeds its
random state and drops its pooled connections (groundchat.lifecycle).

The adapter calls the app directly on the loopback; a request that came through API Gateway carries
its request context (the adapter adds `x-amzn-request-context` to every proxied invocation) and is
answered 404, as for any path the app does not have."""
from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from groundchat.lifecycle import after_restore, restores

AFTER_RESTORE_PATH = "/internal/after-restore"
FROM_API_GATEWAY = "x-amzn-request-context"


def add_after_restore_route(app: FastAPI) -> None:
    @app.post(AFTER_RESTORE_PATH, include_in_schema=False)
    async def restored(request: Request) -> JSONResponse:
        if FROM_API_GATEWAY in request.headers:
            return JSONResponse({"error": {"code": "not-found", "message": "Not Found"}}, status_code=404)
        reset = after_restore()
        return JSONResponse({"restored": True, "connections_reset": reset, "restores": restores()})
