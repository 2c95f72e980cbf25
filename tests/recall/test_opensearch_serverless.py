"""The recall index on OpenSearch Serverless (a VECTORSEARCH collection): no by-query APIs, no
`refresh`, no custom document ids. Removals and renewals search the matching ids and send them to
`_bulk`; the entry id is a field; the sweep still settles every due entry in one sweep although its
writes reach searches only a while later. The managed domain's requests stay as they were
(test_opensearch_recall.py)."""
from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone

import pytest

from groundchat.auth.callers import CHAT_USE, RECALL_READ, RUNS_READ
from groundchat.recall import opensearch as recall_opensearch
from groundchat.recall.entries import make_entry
from groundchat.recall.opensearch import SERVERLESS_MAPPING, SETTLED_FOR, OpenSearchRecallIndex, index_body
from groundchat.recall.sweep import sweep_recall
from groundchat.store import conversations as conversations_module
from groundchat.store.retention import DAY, expiry_after
from groundchat.store.tables import CONVERSATIONS
from groundchat.tools.recall_tool import search_my_conversations
from groundchat_testkit.scripted import ScriptedModel, Step
from groundchat_testkit.clock import ManualClock
from tests.chat_function.conftest import TEST_TOOLS, make_env, parse_sse  # noqa: F401 (make_env: a fixture)
from tests.corpus_support import WordHashEmbedder
from tests.recall.serverless_fake import ServerlessCollection, Unsupported
from tests.search.test_opensearch import FakeOpenSearch

INDEX = "groundchat-recall"
SORT = [{"created_at": "asc"}, {"entry_id": "asc"}]


class ScriptedOpenSearch(FakeOpenSearch):
    """The HTTP fake, a route answering from a list: one reply per request, the last one repeated."""

    def answer(self, method, path):
        for (m, prefix), response in self.routes.items():
            if m == method and path.split("?")[0].startswith(prefix):
                if isinstance(response, list):
                    return response.pop(0) if len(response) > 1 else response[0]
                return response
        return 200, {"acknowledged": True}


@pytest.fixture
def fake():
    server = ScriptedOpenSearch()
    yield server
    server.close()


def sent(fake, method, suffix):
    return [(path, body) for m, path, body in fake.requests if m == method and path.split("?")[0].endswith(suffix)]


def ndjson(body: bytes) -> list[dict]:
    return [json.loads(line) for line in body.decode().strip().split("\n")]


def hits(*docs):
    return 200, {"hits": {"hits": list(docs)}}


def bulk_reply(action, *results):
    return 200, {"errors": False, "items": [{action: {"_id": i, "result": r, "status": 200}} for i, r in results]}


def conversation(owner, cid):
    return {"bool": {"filter": [{"term": {"owner": owner}}, {"term": {"conversation_id": cid}}]}}


# ---- the requests, exactly ----

def test_the_first_entry_creates_the_index_with_an_entry_id_field_and_lets_serverless_pick_the_id(fake):
    fake.routes[("HEAD", f"/{INDEX}")] = (404, None)
    fake.routes[("POST", f"/{INDEX}/_search")] = hits()
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder, serverless=True)
    entry = make_entry("alice", "c1", "r1", "What is 1.4.3?", "Contrast.", expires_at=1_800_000_000)
    index.add(entry)
    [(_, created)] = sent(fake, "PUT", f"/{INDEX}")
    assert json.loads(created) == index_body(64, serverless=True)
    assert json.loads(created)["mappings"]["properties"]["entry_id"] == {"type": "keyword"}
    [(_, lookup)] = sent(fake, "POST", "/_search")
    assert json.loads(lookup) == {"size": 1, "_source": False, "query": {"bool": {"filter": [
        {"term": {"owner": "alice"}}, {"term": {"entry_id": entry.id}}]}}}
    [(path, doc)] = sent(fake, "POST", f"/{INDEX}/_doc")  # no id in the path: the collection assigns it
    assert path.split("?")[0] == f"/{INDEX}/_doc"
    assert json.loads(doc)["entry_id"] == entry.id and json.loads(doc)["expires_at"] == 1_800_000_000
    assert not any(m == "PUT" and "/_doc/" in p for m, p, _ in fake.requests)


def test_adding_an_entry_again_updates_its_document_by_id(fake):
    fake.routes[("POST", f"/{INDEX}/_search")] = hits({"_id": "aoss-1", "_score": 1.0})
    fake.routes[("POST", f"/{INDEX}/_bulk")] = bulk_reply("update", ("aoss-1", "updated"))
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder, serverless=True)
    entry = make_entry("alice", "c1", "r1", "q", "a", expires_at=1_800_086_400)
    index.add(entry)
    mappings = [json.loads(b) for _, b in sent(fake, "PUT", "/_mapping")]
    assert mappings == [SERVERLESS_MAPPING]  # an existing index gains the expiry and entry id fields
    [(_, body)] = sent(fake, "POST", "/_bulk")
    header, change = ndjson(body)
    assert header == {"update": {"_id": "aoss-1"}}
    assert change["doc"]["entry_id"] == entry.id and change["doc"]["expires_at"] == 1_800_086_400
    assert sent(fake, "POST", f"/{INDEX}/_doc") == []


def test_deleting_a_conversation_finds_its_ids_then_deletes_them_in_bulk(fake, monkeypatch):
    monkeypatch.setattr(recall_opensearch, "PAGE", 2)
    fake.routes[("POST", f"/{INDEX}/_search")] = [
        hits({"_id": "d1", "sort": [1.0, "e1"]}, {"_id": "d2", "sort": [2.0, "e2"]}),
        hits({"_id": "d3", "sort": [3.0, "e3"]})]
    fake.routes[("POST", f"/{INDEX}/_bulk")] = [bulk_reply("delete", ("d1", "deleted"), ("d2", "deleted")),
                                               bulk_reply("delete", ("d3", "not_found"))]
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder, serverless=True)
    assert index.remove_conversation("alice", "c1") == 2  # d3 was already gone
    pages = [json.loads(b) for _, b in sent(fake, "POST", "/_search")]
    assert pages == [
        {"size": 2, "_source": False, "query": conversation("alice", "c1"), "sort": SORT},
        {"size": 2, "_source": False, "query": conversation("alice", "c1"), "sort": SORT, "search_after": [2.0, "e2"]}]
    assert [ndjson(b) for _, b in sent(fake, "POST", "/_bulk")] == [
        [{"delete": {"_id": "d1"}}, {"delete": {"_id": "d2"}}], [{"delete": {"_id": "d3"}}]]
    # Neither of what Serverless lacks: no by-query API, no refresh parameter.
    assert not any("_by_query" in p or "refresh" in p for _, p, _ in fake.requests)


def test_the_sweeps_removals_leave_its_next_expiry_queries_until_the_collection_has_refreshed(fake):
    fake.routes[("POST", f"/{INDEX}/_search")] = hits({"_id": "d1", "sort": [1.0, "e1"]}, {"_id": "d2", "sort": [2.0, "e2"]})
    fake.routes[("POST", f"/{INDEX}/_bulk")] = bulk_reply("delete", ("d1", "deleted"), ("d2", "deleted"))
    clock = ManualClock(1000.0)
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder, serverless=True, clock=clock)
    assert index.remove_conversations([("alice", "c1"), ("bob", "c2")]) == 2
    [(_, page)] = sent(fake, "POST", "/_search")
    assert json.loads(page)["query"] == {"bool": {"should": [conversation("alice", "c1"), conversation("bob", "c2")],
                                                  "minimum_should_match": 1}}
    fake.requests.clear()
    fake.routes[("POST", f"/{INDEX}/_search")] = hits()
    index.due_conversations(1_800_000_000, 100)
    due = {"size": 100, "_source": ["owner", "conversation_id"], "query": {"bool": {
        "should": [{"range": {"expires_at": {"lte": 1_800_000_000}}},
                   {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}}],
        "minimum_should_match": 1}}}
    assert json.loads(sent(fake, "POST", "/_search")[0][1]) == {**due, "query": {"bool": {
        **due["query"]["bool"], "must_not": [{"ids": {"values": ["d1", "d2"]}}]}}}
    clock.now += SETTLED_FOR  # long past any refresh: the plain range query again
    fake.requests.clear()
    index.due_conversations(1_800_000_000, 100)
    assert json.loads(sent(fake, "POST", "/_search")[0][1]) == due


def test_renewing_updates_by_id_only_the_entries_behind_their_conversations_expiry(fake):
    fake.routes[("POST", f"/{INDEX}/_search")] = hits(
        {"_id": "old", "sort": [1.0, "e1"], "_source": {"owner": "alice", "conversation_id": "c1", "expires_at": 1_700_000_000}},
        {"_id": "none", "sort": [2.0, "e2"], "_source": {"owner": "alice", "conversation_id": "c1"}},
        # Committed since the sweep read the conversation: its later expiry stays.
        {"_id": "later", "sort": [3.0, "e3"], "_source": {"owner": "alice", "conversation_id": "c1", "expires_at": 1_900_000_000}},
        {"_id": "c3", "sort": [4.0, "e4"], "_source": {"owner": "alice", "conversation_id": "c3", "expires_at": 1}})
    fake.routes[("POST", f"/{INDEX}/_bulk")] = bulk_reply("update", ("old", "updated"), ("none", "updated"), ("c3", "updated"))
    index = OpenSearchRecallIndex(fake.client(), INDEX, WordHashEmbedder, serverless=True)
    assert index.renew({("alice", "c1"): 1_800_000_000, ("alice", "c3"): 1_800_086_400}) == 3
    [(_, page)] = sent(fake, "POST", "/_search")
    assert json.loads(page) == {"size": 500, "_source": ["owner", "conversation_id", "expires_at"], "sort": SORT,
                                "query": {"bool": {"should": [conversation("alice", "c1"), conversation("alice", "c3")],
                                                   "minimum_should_match": 1}}}
    [(_, body)] = sent(fake, "POST", "/_bulk")
    assert ndjson(body) == [{"update": {"_id": "old"}}, {"doc": {"expires_at": 1_800_000_000}},
                            {"update": {"_id": "none"}}, {"doc": {"expires_at": 1_800_000_000}},
                            {"update": {"_id": "c3"}}, {"doc": {"expires_at": 1_800_086_400}}]
    assert not any("_by_query" in p or "refresh" in p for _, p, _ in fake.requests)


def test_the_deployments_kind_chooses_the_path(monkeypatch):
    from groundchat.config import Settings
    from groundchat.recall import open_recall_index
    from groundchat.search import opensearch as search_opensearch

    monkeypatch.setattr(search_opensearch, "make_client", lambda settings: object())
    for service, serverless in (("aoss", True), ("es", False)):
        settings = Settings(search_backend="opensearch", opensearch_endpoint="https://x", opensearch_service=service)
        assert open_recall_index(settings, WordHashEmbedder).serverless is serverless


# ---- the behaviour, against a collection that holds to Serverless's rules ----

def entries(collection) -> dict[str, list]:
    """conversation id -> its entries' expiries, as writes by id see them."""
    out: dict[str, list] = {}
    for doc in sorted(collection.docs.values(), key=lambda d: d["created_at"]):
        out.setdefault(doc["conversation_id"], []).append(doc.get("expires_at"))
    return out


def test_the_fake_refuses_what_serverless_refuses():
    collection = ServerlessCollection()
    index = OpenSearchRecallIndex(collection, INDEX, WordHashEmbedder)  # the domain's path
    with pytest.raises(Unsupported):
        index.add(make_entry("alice", "c1", "r1", "q", "a"))  # a custom id
    with pytest.raises(Unsupported):
        index.remove_conversations([("alice", "c1")])


def test_a_sweep_settles_every_due_entry_though_none_of_its_writes_is_searchable_yet():
    collection = ServerlessCollection()
    clock = ManualClock(1000.0)
    index = OpenSearchRecallIndex(collection, INDEX, WordHashEmbedder, serverless=True, clock=clock)
    for n in range(7):  # seven gone conversations, two entries each
        for run in ("r1", "r2"):
            index.add(make_entry("alice", f"gone{n}", run, f"question {n}", "answer", expires_at=1_000))
    index.add(make_entry("alice", "live", "r1", "an older entry", "answer", expires_at=1_000))
    index.add(make_entry("alice", "live", "r2", "the latest entry", "answer", expires_at=9_000))
    index.add(make_entry("bob", "future", "r1", "not due", "answer", expires_at=9_000))
    collection.refresh()
    read: list[list[str]] = []

    def conversations(ids):
        read.append(ids)
        return {"live": {"owner": "alice", "expires_at": 9_000}, "future": {"owner": "bob", "expires_at": 9_000}}

    swept = sweep_recall(index, conversations, 2_000, batch=3)  # three conversations a round
    assert (swept.removed, swept.conversations_removed, swept.renewed, swept.backlog) == (14, 7, 1, False)
    # Three due entries a round (two conversations), each round making progress without a refresh.
    assert [len(ids) for ids in read] == [2, 2, 2, 2] and swept.checked == 8
    assert entries(collection) == {"live": [9_000, 9_000], "future": [9_000]}

    again = sweep_recall(index, conversations, 2_000, batch=3)  # still unrefreshed: nothing new to do
    assert (again.removed, again.renewed, again.checked, again.backlog) == (0, 0, 0, False)
    collection.refresh()
    clock.now += SETTLED_FOR
    assert sweep_recall(index, conversations, 2_000).checked == 0


def test_an_entry_added_twice_is_one_document_once_visible_and_shows_once_before(monkeypatch):
    collection = ServerlessCollection()
    index = OpenSearchRecallIndex(collection, INDEX, WordHashEmbedder, serverless=True)
    entry = make_entry("alice", "c1", "r1", "contrast question", "contrast answer", expires_at=5_000)
    index.add(entry)
    index.add(entry)  # within the refresh interval: the lookup cannot see the first yet
    collection.refresh()
    assert len(collection.docs) == 2
    assert [h.entry.id for h in index.search("alice", "contrast", 10)] == [entry.id]  # twins collapse
    index.add(make_entry("alice", "c1", "r1", "contrast question", "contrast answer", expires_at=6_000))
    assert len(collection.docs) == 2 and 6_000 in entries(collection)["c1"]  # updated in place
    assert index.remove_conversation("alice", "c1") == 2 and collection.docs == {}


# ---- end to end: the chat writes, the owner deletes, the sweep removes the expired ----

DEC_1 = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc).timestamp()


@pytest.fixture
def env(make_env, monkeypatch):
    env = make_env(ScriptedModel([]), grants={"alice": [CHAT_USE, RUNS_READ, RECALL_READ]},
                   tools=[*TEST_TOOLS, search_my_conversations])
    env.collection = ServerlessCollection()
    env.services.recall_override = OpenSearchRecallIndex(env.collection, INDEX, WordHashEmbedder, serverless=True)
    env.clock = ManualClock(DEC_1)
    monkeypatch.setattr(conversations_module, "time", env.clock)
    return env


async def ask(c, env, message, *steps, conversation_id=None):
    env.model.steps.extend(steps or [Step(text=f"An answer to: {message}")])
    body = {"message": message, **({"conversation_id": conversation_id} if conversation_id else {})}
    r = await c.post("/api/chat", json={"stream": True, **body}, headers=env.token("alice"))
    frames = parse_sse(r.text)
    assert frames[-1][1]["reason"] == "complete", r.text
    return frames


async def test_recall_on_serverless_end_to_end(env, settings):
    from sweep_function.local import sweep_once

    days = settings.retention_days
    async with env.client() as c:
        old = (await ask(c, env, "An old question about contrast"))[0][1]["conversation_id"]
        deleted = (await ask(c, env, "A question about focus order"))[0][1]["conversation_id"]
        env.clock.now = DEC_1 + 40 * DAY
        recent = (await ask(c, env, "A recent question about labels"))[0][1]["conversation_id"]
        env.collection.refresh()  # a minute later
        frames = await ask(c, env, "What did I ask before about labels?",
                           Step(tool_calls=[("search_my_conversations", {"query": "labels"})]),
                           Step(text="You asked about labels."))
        result = next(data for event, data in frames if event == "tool-result")
        assert result["result"]["excerpts"][0]["section"] == recent
        r = await c.delete(f"/api/conversations/{deleted}", headers=env.token("alice"))
        assert r.status_code == 200 and r.json()["deleted"]["recall_entries"] == 1
    # The answer built on recall is not indexed itself (no echo): only the two it could recall.
    assert set(entries(env.collection)) == {old, recent}
    env.collection.refresh()

    swept = await asyncio.to_thread(sweep_once, env.services.dynamo, expiry_after(DEC_1, days), recall=env.services.recall)
    assert swept["recall"] == {"removed": 1, "conversations_removed": 1, "renewed": 0, "checked": 1, "backlog": False}
    assert old not in entries(env.collection)
    assert env.services.dynamo.table(CONVERSATIONS).get_item(Key={"conversation_id": recent}).get("Item")
