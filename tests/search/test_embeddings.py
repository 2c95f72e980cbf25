from __future__ import annotations

import io
import json

import numpy as np
import pytest

from groundchat.search.titan_embeddings import BedrockTitanEmbedder
from groundchat.search.embeddings import (
    LOCAL_MODEL_SHA256,
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


# -- batching by tokens, and vectors unchanged by it ----------------------------------------------

def test_token_batches_sort_by_length_and_keep_each_padded_batch_within_the_budget():
    from groundchat.search.embeddings import token_batches

    lengths = [30, 5, 256, 12, 12, 100, 7, 256, 64, 9]
    batches = token_batches(lengths, 256)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # every text once
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(lengths)
    for b in batches:
        assert max(lengths[i] for i in b) * len(b) <= 256
    # Six short texts padded to 30; 64 would make seven of 64 (448), so it starts the next batch.
    assert [[lengths[i] for i in b] for b in batches] == [[5, 7, 9, 12, 12, 30], [64, 100], [256], [256]]
    assert token_batches([300], 256) == [[0]]  # a text over the budget goes alone
    assert token_batches([], 256) == []


def _texts_of_many_lengths() -> list[str]:
    words = "focus order contrast keyboard label error caption status name role value target".split()
    texts = [" ".join(words[(i * 7 + j) % len(words)] for j in range(n)) for i, n in enumerate(
        [1, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 400])]  # the last is truncated at 256 tokens
    return texts + ["A sentence, with punctuation: (and brackets) — and a dash.", "déjà vu, naïve café"]


# The batching's mechanics are checked exactly on MiniLM, whose vectors do not depend on the texts
# batched beside them (onnxruntime runs its weights as fp32); bge's and e5's int8 files quantize their
# activations per call, so their vectors move a little with the batch (docs/engineering/retrieval-eval.md).
EXACT = "minilm-int8"


def test_batched_vectors_equal_the_previous_pipeline_text_by_text():
    """The same texts through the tokenizer's own padding in groups of 8, as the ingest embedded
    them before batching by tokens, give the same vectors (padding is masked out)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    texts = _texts_of_many_lengths()
    model, tokenizer_path = local_model_files(f"local:{EXACT}")
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    before = []
    for start in range(0, len(texts), 8):
        encodings = tokenizer.encode_batch(texts[start:start + 8])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        before.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    now = LocalOnnxEmbedder(tokens_per_batch=512, model=EXACT).embed(texts)
    assert np.allclose(now, np.concatenate(before), atol=1e-5)
    # Alone, or in a batch padded to a longer text: the same vector.
    alone = LocalOnnxEmbedder(model=EXACT).embed_query(texts[2]).vector
    assert np.allclose(alone, now[2], atol=1e-5)


def test_the_embedder_reports_each_model_call_and_uses_every_core_without_spinning():
    import os

    from groundchat.search.embeddings import session_options
    import onnxruntime as ort

    texts = _texts_of_many_lengths()
    e = LocalOnnxEmbedder(tokens_per_batch=512)
    calls = list(e.embed_in_batches(texts))
    assert len(calls) > 1 and sorted(i for rows, _ in calls for i in rows) == list(range(len(texts)))
    assert all(v.shape == (len(rows), 384) for rows, v in calls)
    options = session_options(ort)
    assert options.intra_op_num_threads == len(os.sched_getaffinity(0))
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    # Memory bounded by the call in progress: no arena kept at its largest, no pattern per shape.
    assert options.enable_cpu_mem_arena is False and options.enable_mem_pattern is False
    assert list(e.embed_in_batches([])) == [] and e.embed([]).shape == (0, 384)


# -- texts longer than the model reads -------------------------------------------------------------

def _long_text(tail: str) -> str:
    body = " ".join(f"Requirement {i}: the service shall provide information in more than one sensory channel."
                    for i in range(30))
    return f"Annex I Section IV\n{body} {tail}"


def test_a_long_texts_tail_counts_and_its_vector_is_the_mean_of_its_windows():
    from groundchat.search.embedding_windows import windows
    from functools import partial

    from groundchat.search.embeddings import WINDOW_TOKENS, token_counts

    e = LocalOnnxEmbedder(model=EXACT)
    about_captions, about_payment = _long_text("Videos shall have captions."), _long_text("Payment shall be accessible.")
    vectors = e.embed([about_captions, about_payment, "short text"])
    # Both share their first 256 tokens: truncated, they were one vector; their tails now differ.
    assert float(vectors[0] @ vectors[1]) < 0.9999
    counts = partial(token_counts, e.load()[1])
    pieces = windows(about_captions, counts, WINDOW_TOKENS)
    assert len(pieces) > 2 and all(p.startswith("Annex I Section IV\n") for p in pieces)
    mean = e.embed(pieces).mean(axis=0)
    assert np.allclose(vectors[0], mean / np.linalg.norm(mean), atol=1e-5)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Windows of one text never reach the model over its length; the short text is unchanged.
    assert max(counts(pieces)) + 2 <= 256
    assert np.allclose(vectors[2], e.embed(["short text"])[0], atol=1e-5)
    assert e.model_id.endswith(f"/windows-{WINDOW_TOKENS}")


def test_progress_reports_a_long_text_once_when_all_its_windows_are_embedded():
    e = LocalOnnxEmbedder(tokens_per_batch=256, model=EXACT)  # one window per model call
    texts = ["short", _long_text("end."), "also short"]
    model_calls = []
    encode = e._encode
    e._encode = lambda encodings: model_calls.append(len(encodings)) or encode(encodings)
    reports = list(e.embed_in_batches(texts))
    # Windows of 199, 199 and 66 tokens: the short texts share a call with the last, each long
    # window has a call of its own; the long text is reported once, with the call that completes it.
    assert model_calls == [3, 1, 1]
    assert [rows for rows, _ in reports] == [[0, 2], [1]]
    assert np.allclose(reports[1][1][0], e.embed([texts[1]])[0], atol=1e-5)
