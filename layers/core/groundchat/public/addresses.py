"""A visitor's address as the key of its rate limit: a keyed hash, never the address itself.

The key is HMAC-SHA256 under the deployment's visitor secret (the salt): the same on every
instance, so they all count one visitor together, and not reversible by a dictionary of the IPv4
space without the secret. Nothing stores or logs the raw address."""
from __future__ import annotations

import hashlib
import hmac
import json

# One bucket for every request whose address could not be read: sharing it is the safe side.
UNKNOWN_ADDRESS = "unknown"


def address_key(secret: str, address: str | None) -> str:
    mac = hmac.new(secret.encode(), f"address:{address or UNKNOWN_ADDRESS}".encode(), hashlib.sha256)
    return mac.hexdigest()[:32]


def source_ip_from_request_context(header: str | None) -> str | None:
    """`requestContext.identity.sourceIp` of the API Gateway (REST) event, which the Lambda Web
    Adapter forwards as the `x-amzn-request-context` header (JSON), overwriting any header of that
    name the client sent. The client cannot choose it, unlike X-Forwarded-For."""
    if not header:
        return None
    try:
        context = json.loads(header)
    except ValueError:
        return None
    identity = context.get("identity") if isinstance(context, dict) else None
    ip = identity.get("sourceIp") if isinstance(identity, dict) else None
    return ip if isinstance(ip, str) and ip else None
