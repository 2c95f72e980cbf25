"""SnapStart's after-restore call (chat_function/snapstart.py, groundchat/lifecycle.py): random
state reseeded, pooled DynamoDB clients made anew, and the route unreachable through API Gateway."""
from __future__ import annotations

import random

from fastapi.testclient import TestClient

from chat_function.snapstart import AFTER_RESTORE_PATH
from groundchat import lifecycle
from groundchat.store.dynamo import Dynamo


def test_after_restore_reseeds_random_so_restored_copies_differ():
    random.seed(1234)  # as if every copy of a snapshot resumed with this state
    state = random.getstate()
    lifecycle.after_restore()
    first = [random.random() for _ in range(4)]
    random.setstate(state)
    lifecycle.after_restore()
    second = [random.random() for _ in range(4)]
    random.setstate(state)
    replayed = [random.random() for _ in range(4)]
    assert first != second and first != replayed


def test_after_restore_makes_the_dynamodb_clients_anew(settings):
    dynamo = Dynamo(settings)
    client, resource = dynamo.client, dynamo.resource
    assert dynamo.client is client  # cached between calls
    lifecycle.after_restore()
    assert dynamo.client is not client and dynamo.resource is not resource


def test_a_failing_holder_does_not_keep_the_others_stale(settings):
    class Holder:
        pass

    holder, calls = Holder(), []
    lifecycle.on_restore(lambda: (_ for _ in ()).throw(RuntimeError("boom")), owner=holder)
    lifecycle.on_restore(lambda: calls.append("ran"), owner=holder)
    lifecycle.after_restore()
    assert calls == ["ran"]


def test_the_adapters_call_resets_and_the_same_path_through_api_gateway_is_not_found(make_env):
    from groundchat_testkit.scripted import ScriptedModel

    env = make_env(ScriptedModel([]))
    client = TestClient(env.app)
    before = lifecycle.restores()
    response = client.post(AFTER_RESTORE_PATH)
    assert response.status_code == 200 and response.json()["restored"] is True
    assert lifecycle.restores() == before + 1
    proxied = client.post(AFTER_RESTORE_PATH, headers={"x-amzn-request-context": "{}"})
    assert proxied.status_code == 404 and lifecycle.restores() == before + 1
