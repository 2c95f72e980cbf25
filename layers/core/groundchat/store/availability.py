"""Telling "the store cannot be reached" apart from every other failure: the reader is told to
try again shortly (503 with Retry-After, or an `error` frame with code `store-unavailable`), not
that the model provider failed, and nothing is lost."""
from __future__ import annotations

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

STORE_UNAVAILABLE = "store-unavailable"
STORE_UNAVAILABLE_MESSAGE = "The conversation store cannot be reached right now; nothing was lost. Try again in a few seconds."
STORE_UNAVAILABLE_HINT = "DynamoDB could not be reached or asked us to come back later: check its endpoint, throttling and the table's capacity."
RETRY_AFTER_SECONDS = 5

_UNREACHABLE = (EndpointConnectionError, ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError)
# DynamoDB's own words for "not now": retrying later is the answer, not a bug report.
_BUSY_CODES = {
    "InternalServerError", "InternalFailure", "ServiceUnavailable", "ThrottlingException",
    "ProvisionedThroughputExceededException", "RequestLimitExceeded", "LimitExceededException",
}


def store_unavailable(exc: BaseException) -> bool:
    """True for a DynamoDB that cannot be reached or says to come back later, anywhere in the
    exception's chain (a store call wrapped in our own exception still counts)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, _UNREACHABLE):
            return True
        if isinstance(current, ClientError):
            error = current.response.get("Error", {})
            status = current.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            if error.get("Code") in _BUSY_CODES or int(status) >= 500:
                return True
        current = current.__cause__ or current.__context__
    return False


def store_failure_answer(exc: BaseException) -> tuple[int, dict, dict[str, str]]:
    """(status, JSON body, headers) for a store call that failed under a route: 503 with
    Retry-After when the store is unreachable or busy, else a typed 500 that names nothing inside."""
    if store_unavailable(exc):
        body = {"error": {"code": STORE_UNAVAILABLE, "message": STORE_UNAVAILABLE_MESSAGE}}
        return 503, body, {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return 500, {"error": {"code": "internal-error", "message": "Something failed on our side; nothing was lost. Try again."}}, {}
