"""The model files the packaged functions carry (search/model_bundle.py), how the embeddings module
finds them, and a missing or broken model as the search's `unavailable`, never a tool failure."""
from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from groundchat.search import embeddings
from groundchat.search.embeddings import EmbeddingError, LocalOnnxEmbedder, local_model_files, preload
from groundchat.search.model_bundle import BUNDLE_NAME, MANIFEST, BundleError, sha256_file, shipped_files, write_bundle
from groundchat.search.service import SearchService


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    """A folder on the import path, as a layer's python/ is in Lambda."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop(BUNDLE_NAME, None)


def test_no_bundle_on_the_path_means_the_packages_files(on_path):
    assert shipped_files() is None
    model, tokenizer = local_model_files()
    assert BUNDLE_NAME not in str(model) and model.exists() and tokenizer.exists()


def test_the_shipped_files_are_found_in_order_and_preferred(on_path):
    source = local_model_files()
    folder = write_bundle(source, on_path, embeddings.LOCAL_MODEL_ID)
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["model_id"] == embeddings.LOCAL_MODEL_ID
    assert [e["name"] for e in manifest["files"]] == [p.name for p in source]
    assert [e["sha256"] for e in manifest["files"]] == [sha256_file(p) for p in source]
    assert local_model_files() == tuple(folder / p.name for p in source)
    # The shipped copy embeds exactly as the packages' files do.
    shipped = LocalOnnxEmbedder().embed(["visible keyboard focus"])
    original = LocalOnnxEmbedder(*source).embed(["visible keyboard focus"])
    assert (shipped == original).all()


def test_a_truncated_shipped_file_is_an_embedding_error(on_path):
    folder = write_bundle(local_model_files(), on_path, "m")
    model = folder / json.loads((folder / MANIFEST).read_text())["files"][0]["name"]
    model.write_bytes(model.read_bytes()[:1000])
    with pytest.raises(BundleError, match="bytes"):
        shipped_files()
    with pytest.raises(EmbeddingError, match="bytes"):
        local_model_files()


def test_two_files_of_one_name_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    files = [tmp_path / "a" / "model.onnx", tmp_path / "b" / "model.onnx"]
    for f in files:
        f.write_bytes(b"x")
    with pytest.raises(BundleError, match="share a name"):
        write_bundle(files, tmp_path / "out", "m")


def test_a_missing_model_does_not_fail_the_embedders_construction_but_its_load(monkeypatch, tmp_path):
    def missing(spec=None):
        raise EmbeddingError("package 'the_model' is not installed")

    monkeypatch.setattr(embeddings, "local_model_files", missing)
    embedder = LocalOnnxEmbedder()  # built by the search service's constructor: must not raise
    with pytest.raises(EmbeddingError, match="not installed"):
        embedder.load()


class _UnreachedBackend:
    name = "unreached"

    def legs(self, *args, **kwargs):
        raise AssertionError("the search must stop at the embedding")


@pytest.mark.parametrize("broken", ["missing", "not a model"])
def test_a_missing_or_broken_model_makes_the_search_unavailable_with_a_reason(tmp_path, monkeypatch, broken):
    model, tokenizer = local_model_files()
    if broken == "missing":
        embedder = LocalOnnxEmbedder(tmp_path / "absent.onnx", tokenizer)
    else:
        # Right checksum pins do not apply to a file onnxruntime cannot read: still unavailable.
        fake = tmp_path / "model.onnx"
        fake.write_bytes(b"not an onnx graph")
        embedder = LocalOnnxEmbedder(fake, tokenizer)
        embedder.model = dataclasses.replace(embedder.model, model_sha256=sha256_file(fake))
    result = SearchService(_UnreachedBackend(), embedder).search("why does contrast matter")
    assert (result.outcome, result.reason, result.passages) == ("unavailable", "embedding_unavailable", [])
    assert result.debug.record()["error"]


def test_preload_loads_the_shared_local_model_and_leaves_bedrock_alone(monkeypatch):
    loaded = []

    class Shared:
        def load(self):
            loaded.append(True)

    monkeypatch.setattr(embeddings, "shared_local_embedder", lambda: Shared())
    preload("bedrock:amazon.titan-embed-text-v2:0")
    assert loaded == []
    preload("local:minilm-int8")
    assert loaded == [True]


def test_the_warm_up_loads_the_model_and_the_offline_gates_examples(monkeypatch):
    from groundchat.config import Settings
    from groundchat import warm_up as warm

    loaded = []
    monkeypatch.setattr(warm, "preload", lambda spec: loaded.append(spec))

    class Gate:
        def margin(self, question):
            loaded.append("examples")
            return 0.0

    monkeypatch.setattr("groundchat.offline.topic_neighbours.local_topic_neighbours", lambda spec: Gate())
    timings = warm.warm_up(Settings(model="offline"))
    assert loaded == [Settings().embedding_model, "examples"]
    assert set(timings) == {"model", "topic_examples", "question_words"}


def test_a_model_that_cannot_load_leaves_the_warm_up_without_failing_the_start(monkeypatch):
    from groundchat.config import Settings
    from groundchat import warm_up as warm

    def broken(spec):
        raise EmbeddingError("package 'the_model' is not installed")

    monkeypatch.setattr(warm, "preload", broken)
    assert warm.warm_up(Settings(model="offline")) == {}


def test_the_warm_up_hands_back_the_heap_its_loading_freed(monkeypatch):
    from groundchat.config import Settings
    from groundchat import warm_up as warm

    trimmed = []
    monkeypatch.setattr(warm, "preload", lambda spec: None)
    monkeypatch.setattr(warm, "hand_back_freed_memory", lambda: trimmed.append(True))
    warm.warm_up(Settings(model="ollama:x"))
    assert trimmed == [True]


def test_freed_heap_goes_back_to_the_system():
    import sys

    from groundchat.warm_up import hand_back_freed_memory

    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's malloc_trim is Linux's")

    def rss_mib() -> float:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024

    # 120 MiB of malloc'd blocks (over pymalloc's 512 bytes, under mmap's threshold: the heap), all
    # freed but the last, which pins the heap's top so that free alone gives nothing back.
    blocks = [bytes(1200) for _ in range(100_000)]
    last = blocks[-1]
    del blocks
    held = rss_mib()
    if not hand_back_freed_memory():
        pytest.skip("no glibc here")
    assert held - rss_mib() > 60
    assert len(last) == 1200


def test_after_the_warm_up_a_large_block_is_mapped_on_its_own():
    import ctypes
    import ctypes.util
    import sys

    from groundchat.warm_up import MMAP_THRESHOLD_BYTES, hand_back_freed_memory

    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's mallopt is Linux's")

    class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("no glibc 2.33 here")
    libc.mallinfo2.restype = MallInfo2
    # A freed 30 MiB block raises glibc's dynamic threshold to 30 MiB: smaller blocks then come from
    # the heap, which keeps them once freed. (A block that a free chunk of the heap can hold comes
    # from it whatever the threshold: the one below is larger than this process has freed.)
    large = b"\x01" * (30 * 1024 * 1024)
    del large
    assert hand_back_freed_memory()
    mapped = libc.mallinfo2().hblks
    block = b"\x01" * (20 * 1024 * 1024)
    assert libc.mallinfo2().hblks == mapped + 1  # mapped apart: its free unmaps it
    assert len(block) > MMAP_THRESHOLD_BYTES
