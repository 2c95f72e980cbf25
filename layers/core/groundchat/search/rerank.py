"""Optional second-stage ordering of the fused passages. `none` keeps the fusion order."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from groundchat.search.types import LegHit

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from groundchat.json_shapes import JsonObject


class Reranker(Protocol):
    model: str

    def rerank(self, query: str, hits: list[LegHit]) -> list[LegHit]: ...


class NoRerank:
    model = "none"

    def rerank(self, query: str, hits: list[LegHit]) -> list[LegHit]:
        return hits


class BedrockRerank:
    """Bedrock's Rerank API (bedrock-agent-runtime `rerank`), where the region offers it."""

    def __init__(self, client: BaseClient, model: str, region: str = "eu-west-1") -> None:
        self._client = client
        self.model = f"bedrock:{model}"
        # The API takes the model's ARN; the setting (and the price table) name it by its id.
        self._arn = model if model.startswith("arn:") else f"arn:aws:bedrock:{region}::foundation-model/{model}"

    def request(self, query: str, hits: list[LegHit]) -> JsonObject:
        return {
            "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": [
                {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": h.chunk.text}}}
                for h in hits
            ],
            "rerankingConfiguration": {
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": {
                    "numberOfResults": len(hits),
                    "modelConfiguration": {"modelArn": self._arn},
                },
            },
        }

    def rerank(self, query: str, hits: list[LegHit]) -> list[LegHit]:
        if not hits:
            return hits
        response = self._client.rerank(**self.request(query, hits))
        return [LegHit(hits[r["index"]].chunk, float(r["relevanceScore"])) for r in response["results"]]


def make_reranker(spec: str, *, region: str = "eu-west-1") -> Reranker:
    """`none`, or `bedrock:<model id>`: a model with a price per query (spending/prices.py
    RERANK_PRICES), else UnknownModelPrice here, before any client is made or called."""
    kind, _, model = spec.partition(":")
    if kind in ("", "none"):
        return NoRerank()
    if kind == "bedrock" and model:
        import boto3

        from groundchat.spending.prices import rerank_price

        rerank_price(spec)
        return BedrockRerank(boto3.client("bedrock-agent-runtime", region_name=region), model, region)
    raise ValueError(f"unknown rerank setting {spec!r}: use none or bedrock:<model id>")


__all__ = ["BedrockRerank", "NoRerank", "Reranker", "make_reranker"]
