#!/bin/sh
# Lambda Web Adapter entry: start uvicorn on the chat app; the adapter proxies invocations to it.
# In Lambda the layer's packages are in /opt/python, which only the runtime's own bootstrap puts on
# sys.path; a process the adapter starts needs it on PYTHONPATH (absent locally, so harmless).
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/opt/python"
# The adapter is the only peer (127.0.0.1): its X-Forwarded-Proto (API Gateway's "https") gives the
# scheme the origin check compares. The visitor's address never comes from X-Forwarded-For here:
# in AWS it is read from API Gateway's request context (GROUNDCHAT_VISITOR_ADDRESS_FROM=api-gateway).
exec python -m uvicorn --host 127.0.0.1 --port "${PORT:-8080}" --no-access-log \
  --proxy-headers --forwarded-allow-ips 127.0.0.1 chat_function.main:app
