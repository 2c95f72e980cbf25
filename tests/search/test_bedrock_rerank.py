"""The Bedrock rerank's request and response, checked against the service's own API model by
botocore's Stubber (a request or a response of the wrong shape fails), on a response shaped as
bedrock-agent-runtime's `rerank` answers: results by index with a relevance score, best first."""
from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from groundchat.corpus.chunk import Chunk
from groundchat.search.rerank import BedrockRerank, make_reranker
from groundchat.search.types import LegHit

RECORDED = {"results": [{"index": 2, "relevanceScore": 0.91}, {"index": 0, "relevanceScore": 0.42},
                        {"index": 1, "relevanceScore": 0.03}]}


def _hits() -> list[LegHit]:
    texts = ["Text needs a contrast ratio of at least 4.5:1.", "Penalties are set by each member state.",
             "Low contrast makes text hard to read for people with low vision."]
    return [LegHit(Chunk.model_construct(id=f"c{i}", text=t), 1.0 - i / 10) for i, t in enumerate(texts)]


def test_the_request_and_the_recorded_response_have_the_apis_shapes():
    client = boto3.client("bedrock-agent-runtime", region_name="eu-west-1")
    rerank = BedrockRerank(client, "amazon.rerank-v1:0", "eu-west-1")
    hits = _hits()
    with Stubber(client) as stub:
        stub.add_response("rerank", RECORDED, rerank.request("why does low contrast matter", hits))
        ranked = rerank.rerank("why does low contrast matter", hits)
        stub.assert_no_pending_responses()
    assert [h.chunk.id for h in ranked] == ["c2", "c0", "c1"]
    assert [h.score for h in ranked] == [0.91, 0.42, 0.03]
    model_arn = rerank.request("q", hits)["rerankingConfiguration"]["bedrockRerankingConfiguration"]["modelConfiguration"]
    assert model_arn == {"modelArn": "arn:aws:bedrock:eu-west-1::foundation-model/amazon.rerank-v1:0"}


def test_a_priced_model_is_made_and_an_unpriced_one_refused():
    assert make_reranker("bedrock:amazon.rerank-v1:0").model == "bedrock:amazon.rerank-v1:0"
    assert make_reranker("none").model == "none"
    from groundchat.spending.prices import UnknownModelPrice

    with pytest.raises(UnknownModelPrice):
        make_reranker("bedrock:acme.rerank-x")
