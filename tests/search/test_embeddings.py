from __future__ import annotations

import io
import json

import numpy as np
import pytest

from groundchat.search.embeddings import (
    LOCAL_MODEL_SHA256,
    BedrockTitanEmbedder,
    EmbeddingError,
    LocalOnnxEmbedder,
    local_model_files,
    make_embedder,
    sha256_file,
)


def test_local_model_and_tokenizer_come_from_installed_packages_with_pinned_checksums():
    model, tokenizer = local_model_files()
    assert model.name == "model.onnx" and "site-packages" in str(model) or model.exists()
    assert sha256_file(model) == LOCAL_MODEL_SHA256
    assert tokenizer.exists()


def test_local_embedder_gives_unit_vectors_and_similar_texts_are_close():
    e = LocalOnnxEmbedder()
    v = e.embed(["keyboard focus indicator", "visible focus when tabbing", "penalties for breaches of the law"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])
    q = e.embed_query("focus")
    assert q.model_id == e.model_id and q.vector.shape == (384,)


def test_a_tampered_model_file_is_refused(tmp_path):
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    _, tokenizer = local_model_files()
    with pytest.raises(EmbeddingError, match="sha256"):
        LocalOnnxEmbedder(model_path=fake, tokenizer_path=tokenizer).embed(["x"])


class _FakeBedrock:
    def __init__(self):
        self.calls = []

    def invoke_model(self, **kwargs):
        self.calls.append(kwargs)
        # The response shape of bedrock-runtime InvokeModel for Titan Text Embeddings v2.
        body = json.dumps({"embedding": [3.0, 4.0], "inputTextTokenCount": 2})
        return {"body": io.BytesIO(body.encode()), "contentType": "application/json"}


def test_titan_request_and_response():
    client = _FakeBedrock()
    e = BedrockTitanEmbedder(client, dimension=2)
    v = e.embed(["hello", "world"])
    assert client.calls[0] == {
        "modelId": "amazon.titan-embed-text-v2:0",
        "body": json.dumps({"inputText": "hello", "dimensions": 2, "normalize": True}),
        "contentType": "application/json", "accept": "application/json",
    }
    assert len(client.calls) == 2
    assert np.allclose(v, [[0.6, 0.8], [0.6, 0.8]])
    assert e.model_id == "bedrock:amazon.titan-embed-text-v2:0:2"


def test_unknown_embedding_setting():
    with pytest.raises(EmbeddingError):
        make_embedder("word2vec")
