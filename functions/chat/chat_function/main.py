"""The ASGI entry point uvicorn serves (under the Lambda Web Adapter in AWS, directly locally)."""
from chat_function.app import create_app
from groundchat.config import get_settings
from groundchat.public.startup_check import PublicModeRefused
from groundchat.warm_up import warm_up


def _app_or_refusal():
    try:
        return create_app()
    except PublicModeRefused as refused:
        # One line in the function's log (and a failed cold start), not a traceback to read through.
        raise SystemExit(str(refused)) from None


app = _app_or_refusal()
# At init, before the adapter's readiness check passes: the first question never waits for the
# model, and a SnapStart snapshot is taken with it loaded (groundchat/warm_up.py).
warm_up(get_settings())
