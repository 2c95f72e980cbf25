#!/bin/sh
# Lambda Web Adapter entry: start uvicorn on the chat app; the adapter proxies invocations to it.
# In Lambda the layer's packages are in /opt/python, which only the runtime's own bootstrap puts on
# sys.path; a process the adapter starts needs it on PYTHONPATH (absent locally, so harmless).
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/opt/python"
exec python -m uvicorn --host 127.0.0.1 --port "${PORT:-8080}" --no-access-log chat_function.main:app
