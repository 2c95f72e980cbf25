"""Who may touch the recall index in AWS, on both kinds of OpenSearch: the chat writes entries, the
sweep removes and renews them, and neither gains anything on the corpus it did not have. Each grant
is pinned here, together with the recall index's default name it is written for."""
from __future__ import annotations

import json
import re

from groundchat.config import Settings
from tests.infra.conftest import REPO, as_list, statements

DOMAIN = "arn:${AWS::Partition}:es:${AWS::Region}:${AWS::AccountId}:domain/groundchat-${Stage}"
RECALL_ARNS = [f"{DOMAIN}/groundchat-recall", f"{DOMAIN}/groundchat-recall/*"]
RECALL_PERMISSIONS = ["aoss:CreateIndex", "aoss:UpdateIndex", "aoss:DescribeIndex", "aoss:ReadDocument", "aoss:WriteDocument"]


def search_grants(resources, logical) -> dict[str, tuple[list[str], list[str]]]:
    """Sid -> (actions, resources as written) of a function's OpenSearch statements."""
    out = {}
    for s in statements(resources, logical):
        actions = sorted(as_list(s["Action"]))
        if actions[0].startswith(("es:", "aoss:")):
            out[s["Sid"]] = (actions, [r["Fn::Sub"] if "Fn::Sub" in r else str(r) for r in as_list(s["Resource"])])
    return out


def data_access_rules(resources) -> dict[str, list[tuple[str, str, list[str]]]]:
    """Principal -> (resource type, resource, permissions) of each rule naming it."""
    policy = json.loads(resources["CorpusDataAccessPolicy"]["Properties"]["Policy"]["Fn::Sub"])
    out: dict[str, list] = {}
    for statement in policy:
        for principal in statement["Principal"]:
            name = re.fullmatch(r"\$\{(\w+)\.Arn\}", principal).group(1)
            for rule in statement["Rules"]:
                for resource in rule["Resource"]:
                    out.setdefault(name, []).append((rule["ResourceType"], resource, rule["Permission"]))
    return out


def test_the_grants_are_written_for_the_recall_indexs_default_name():
    assert Settings.model_fields["recall_index"].default == "groundchat-recall"


def test_the_chat_may_put_on_the_recall_index_of_the_domain_and_nowhere_else(resources):
    assert search_grants(resources, "ChatFunction") == {
        "SearchTheCorpusServerless": (["aoss:APIAccessAll"], [str({"Fn::GetAtt": ["CorpusCollection", "Arn"]})]),
        # The corpus: read only, as before.
        "SearchTheCorpus": (["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"], [f"{DOMAIN}/*"]),
        # Creating the recall index, adding a field, writing an entry: PUTs on that index alone. No
        # DELETE: removals are deletes by query (POST).
        "WriteRecallEntries": (["es:ESHttpPut"], RECALL_ARNS),
    }
    # Only on the managed domain: on Serverless the collection's data access policy decides.
    write = next(s for s in resources["ChatFunction"]["Properties"]["Policies"][0]["Statement"]
                 if "Fn::If" in s and s["Fn::If"][2].get("Sid") == "WriteRecallEntries")
    assert write["Fn::If"][:2] == ["UseServerless", {"Ref": "AWS::NoValue"}]


def test_the_sweep_may_search_map_and_write_the_recall_index_only(resources):
    assert search_grants(resources, "SweepFunction") == {
        "SweepRecallEntriesServerless": (["aoss:APIAccessAll"], [str({"Fn::GetAtt": ["CorpusCollection", "Arn"]})]),
        "SweepRecallEntries": (["es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"], RECALL_ARNS),
    }


def test_serverless_data_access_names_each_role_with_exactly_what_it_needs(resources):
    corpus, recall = "index/groundchat-${Stage}/*", "index/groundchat-${Stage}/groundchat-recall*"
    assert data_access_rules(resources) == {
        "IngestFunctionRole": [
            ("index", corpus, ["aoss:CreateIndex", "aoss:UpdateIndex", "aoss:DeleteIndex", "aoss:DescribeIndex",
                               "aoss:ReadDocument", "aoss:WriteDocument"]),
            ("collection", "collection/groundchat-${Stage}",
             ["aoss:CreateCollectionItems", "aoss:UpdateCollectionItems", "aoss:DescribeCollectionItems"])],
        # The corpus read only; the recall index written (create, map, add, delete and update by id).
        "ChatFunctionRole": [("index", corpus, ["aoss:DescribeIndex", "aoss:ReadDocument"]),
                             ("index", recall, RECALL_PERMISSIONS)],
        # Nothing of the corpus, nothing at the collection level, no DeleteIndex.
        "SweepFunctionRole": [("index", recall, RECALL_PERMISSIONS)],
    }


def test_deploy_md_maps_chat_and_sweep_to_a_role_limited_to_the_recall_index():
    text = (REPO / "docs" / "guide" / "deploy.md").read_text(encoding="utf-8")
    payloads = dict(re.findall(r"/_plugins/_security/api/(\S+?)\" \\\n\s+-H 'content-type: application/json' -d '(\{.*?\})'", text))
    assert json.loads(payloads["roles/groundchat_recall"]) == {
        "cluster_permissions": ["cluster_composite_ops"],
        "index_permissions": [{"index_patterns": ["groundchat-recall*"],
                               "allowed_actions": ["indices:admin/get", "create_index", "read", "write"]}]}
    assert json.loads(payloads["rolesmapping/groundchat_recall"]) == {
        "backend_roles": ["<ChatFunctionRoleArn>", "<SweepFunctionRoleArn>"]}
    # The corpus stays read only for the chat; the sweep is mapped to nothing else.
    assert json.loads(payloads["rolesmapping/readall"]) == {"backend_roles": ["<ChatFunctionRoleArn>"]}
    assert "<SweepFunctionRoleArn>" not in payloads["rolesmapping/all_access"] + payloads["rolesmapping/readall"]
