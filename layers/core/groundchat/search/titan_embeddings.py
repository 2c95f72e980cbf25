"""Bedrock's Titan Text Embeddings v2: an option for the search and the recall in AWS that no retrieval
figure here has measured (the local model, search/embeddings.py, is the default everywhere)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

import numpy as np

from groundchat.search.embedding_base import _QueryMixin, unit_rows

if TYPE_CHECKING:
    from botocore.client import BaseClient


class BedrockTitanEmbedder(_QueryMixin):
    """One `invoke_model` per text (Titan v2 takes a single inputText)."""

    def __init__(self, client: BaseClient, model: str = "amazon.titan-embed-text-v2:0", dimension: int = 1024) -> None:
        self._client = client
        self._model = model
        self.dimension = dimension
        self.model_id = f"bedrock:{model}:{dimension}"

    def request_body(self, text: str) -> str:
        return json.dumps({"inputText": text, "dimensions": self.dimension, "normalize": True})

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            response = self._client.invoke_model(
                modelId=self._model, body=self.request_body(text),
                contentType="application/json", accept="application/json",
            )
            payload = json.loads(response["body"].read())
            rows.append(payload["embedding"])
        return unit_rows(np.array(rows, dtype=np.float32).reshape(len(rows), self.dimension))
