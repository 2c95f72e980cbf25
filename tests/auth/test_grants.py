"""Grants in the store decide `can`; reads are cached briefly, and a change here is seen at once."""
from groundchat.auth.callers import Caller
from groundchat.store.users import UserStore


async def test_can_reads_grants_once_per_burst_and_sees_its_own_changes(dynamo):
    users = UserStore(dynamo)
    alice = Caller(id="alice")
    await users.grant("alice", ["chat.use"])
    reads = []
    original = users.grants

    async def counting(user_id):
        reads.append(user_id)
        return await original(user_id)

    users.grants = counting
    assert await users.can("chat.use", alice) is True
    assert await users.can("runs.read", alice) is False
    assert await users.can("chat.use", alice) is True
    assert reads == ["alice"]
    await users.grant("alice", ["runs.read"])
    assert await users.can("runs.read", alice) is True
    await users.revoke("alice", ["chat.use"])
    assert await users.can("chat.use", alice) is False
    assert await users.can("chat.use", Caller(id="nobody")) is False
