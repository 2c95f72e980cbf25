"""The anonymous visitor: a real caller with its own, configured permission set.

A visitor's id is minted by the server when a human check passes and travels only inside a signed
session; its permissions never come from the grants table, and `traces.read` is never among them
(a trace holds other callers' questions and tool arguments)."""
from __future__ import annotations

import uuid

from groundchat.auth.callers import ALL_PERMISSIONS, RECALL_READ, TRACES_READ, Caller

VISITOR_ID_PREFIX = "visitor:"
# Permissions no configuration can give a visitor.
# Recall reads past conversations by caller id, and a visitor id lasts one session.
NEVER_FOR_VISITORS = frozenset({TRACES_READ, RECALL_READ})


class BadVisitorPermissions(ValueError):
    pass


def new_visitor_id() -> str:
    return f"{VISITOR_ID_PREFIX}{uuid.uuid4().hex}"


def is_visitor_id(caller_id: str) -> bool:
    return caller_id.startswith(VISITOR_ID_PREFIX)


def visitor(visitor_id: str) -> Caller:
    return Caller(id=visitor_id, kind="visitor")


def visitor_permissions(configured: str) -> frozenset[str]:
    """GROUNDCHAT_VISITOR_PERMISSIONS as a set; an unknown name or a forbidden one is an error."""
    names = frozenset(p.strip() for p in configured.split(",") if p.strip())
    unknown = sorted(names - set(ALL_PERMISSIONS))
    if unknown:
        raise BadVisitorPermissions(f"GROUNDCHAT_VISITOR_PERMISSIONS names unknown permission(s) {', '.join(unknown)}; "
                                    f"known: {', '.join(ALL_PERMISSIONS)}")
    forbidden = sorted(names & NEVER_FOR_VISITORS)
    if forbidden:
        raise BadVisitorPermissions(f"GROUNDCHAT_VISITOR_PERMISSIONS may not give visitors {', '.join(forbidden)}")
    return names


def visitor_may(permission: str, configured: str) -> bool:
    """Asked for every route and tool a visitor reaches; a bad configuration allows nothing."""
    try:
        return permission in visitor_permissions(configured)
    except BadVisitorPermissions:
        return False
