#!/bin/sh
# Lambda Web Adapter entry: start uvicorn on the chat app; the adapter proxies invocations to it.
exec python -m uvicorn --host 127.0.0.1 --port "${PORT:-8080}" --no-access-log chat_function.main:app
