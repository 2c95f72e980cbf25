"""Visitors: a real caller with a configured permission set (never traces.read), and the signed
session that spares them a challenge per question."""
from __future__ import annotations

import jwt
import pytest

from groundchat.auth.callers import Caller
from groundchat.public.visitor_sessions import CARRY_OVER_SECONDS, SessionRead, issue_session, read_session
from groundchat.public.visitors import BadVisitorPermissions, is_visitor_id, new_visitor_id, visitor, visitor_may, visitor_permissions

SECRET = "v" * 40
NOW = 1_800_000_000.0


def test_a_visitor_is_a_caller_of_its_own_kind():
    who = visitor(new_visitor_id())
    assert isinstance(who, Caller) and who.is_visitor and is_visitor_id(who.id)
    assert not Caller(id="alice").is_visitor


def test_visitor_permissions_are_configured_and_never_include_traces():
    assert visitor_permissions("chat.use, docs.read,runs.read") == {"chat.use", "docs.read", "runs.read"}
    with pytest.raises(BadVisitorPermissions, match="may not give visitors traces.read"):
        visitor_permissions("chat.use,traces.read")
    with pytest.raises(BadVisitorPermissions, match="unknown permission"):
        visitor_permissions("chat.use,admin")
    assert visitor_may("docs.read", "chat.use,docs.read") is True
    assert visitor_may("runs.read", "chat.use,docs.read") is False
    assert visitor_may("chat.use", "chat.use,traces.read") is False  # a bad set allows nothing


async def test_services_ask_the_configured_set_for_visitors_and_the_store_for_people(dynamo, settings):
    from groundchat.services import Services

    services = Services(settings=settings.model_copy(update={"visitor_permissions": "chat.use,docs.read"}), dynamo=dynamo)
    await services.users.grant("alice", ["traces.read"])
    guest = visitor(new_visitor_id())
    assert [await services.can(p, guest) for p in ("chat.use", "docs.read", "runs.read", "traces.read")] == [True, True, False, False]
    assert await services.can("traces.read", Caller(id="alice")) is True
    # A grant stored under a visitor's id gives the visitor nothing.
    await services.users.grant(guest.id, ["traces.read"])
    assert await services.can("traces.read", guest) is False


def test_a_session_names_its_visitor_until_it_runs_out():
    issued = issue_session(SECRET, "visitor:abc", minutes=30, now=NOW)
    assert issued.max_age == 1800
    assert read_session(SECRET, issued.token, NOW + 60) == SessionRead("visitor:abc", expired=False)
    assert read_session(SECRET, issued.token, NOW + 1800) == SessionRead("visitor:abc", expired=True)
    assert read_session(SECRET, issued.token, NOW + 1800 + CARRY_OVER_SECONDS) is None


def test_a_session_not_signed_by_us_names_nobody():
    issued = issue_session(SECRET, "visitor:abc", minutes=30, now=NOW)
    assert read_session("w" * 40, issued.token, NOW) is None
    head, body, sig = issued.token.split(".")
    assert read_session(SECRET, f"{head}.{body}x.{sig}", NOW) is None
    # Signed with the raw secret (not the derived session key), or naming a person: refused.
    forged = jwt.encode({"sub": "visitor:abc", "iss": "groundchat-visitor", "aud": "groundchat", "exp": int(NOW) + 60}, SECRET, "HS256")
    assert read_session(SECRET, forged, NOW) is None
    assert read_session(SECRET, issue_session(SECRET, "alice", 30, NOW).token, NOW) is None
    assert read_session(SECRET, None, NOW) is None and read_session(SECRET, "garbage", NOW) is None
