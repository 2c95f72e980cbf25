"""The ASGI entry point uvicorn serves (under the Lambda Web Adapter in AWS, directly locally)."""
from chat_function.app import create_app
from groundchat.public.startup_check import PublicModeRefused


def _app_or_refusal():
    try:
        return create_app()
    except PublicModeRefused as refused:
        # One line in the function's log (and a failed cold start), not a traceback to read through.
        raise SystemExit(str(refused)) from None


app = _app_or_refusal()
