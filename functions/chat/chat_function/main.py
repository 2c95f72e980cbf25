"""The ASGI entry point uvicorn serves (under the Lambda Web Adapter in AWS, directly locally)."""
import logging

from chat_function.app import create_app
from groundchat.config import get_settings
from groundchat.public.startup_check import PublicModeRefused
from groundchat.search.embeddings import EmbeddingError, preload

log = logging.getLogger("groundchat.chat")


def _app_or_refusal():
    try:
        return create_app()
    except PublicModeRefused as refused:
        # One line in the function's log (and a failed cold start), not a traceback to read through.
        raise SystemExit(str(refused)) from None


def _load_the_model() -> None:
    # At init, before the adapter's readiness check passes: the first question never waits for the
    # model, and a SnapStart snapshot is taken with it loaded. A model that cannot load is not a
    # failed start: the search answers `unavailable` with the reason, the other tools still work.
    try:
        preload(get_settings().embedding_model)
    except EmbeddingError as exc:
        log.warning("embedding model unavailable: %s", exc)


app = _app_or_refusal()
_load_the_model()
