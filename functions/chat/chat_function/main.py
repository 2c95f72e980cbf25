"""The ASGI entry point uvicorn serves (under the Lambda Web Adapter in AWS, directly locally)."""
from chat_function.app import create_app
from groundchat.public.startup_check import PublicModeRefused


def _app_or_refusal():
    try:
        return create_app()
    except PublicModeRefused as refused:
        # One line in the function's log (and a failed cold start), not a traceback to read through.
        raise SystemExit(str(refused)) from None


async def warm_up_at_start() -> None:
    """Loads what the first answer would (groundchat/warm_up.py): the embedding model and its
    neighbours. Run by uvicorn's startup, which ends before it listens, so at init, before the
    adapter's readiness check passes: the first question never waits for the model, and a SnapStart
    snapshot is taken with it loaded. Not at import: what imports the app without serving it (a
    test, the OpenAPI document) does not load numpy and onnxruntime for nothing."""
    from groundchat.config import get_settings
    from groundchat.warm_up import warm_up

    warm_up(get_settings())


app = _app_or_refusal()
app.router.on_startup.append(warm_up_at_start)
