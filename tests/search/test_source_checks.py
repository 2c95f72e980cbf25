"""The ingest records when it checked a source at its official address and the hash of what it read;
the index records the hash of the text it holds. They differ only when the official text changed and
the index has not caught up."""
from __future__ import annotations

import dataclasses
import json

import pytest

import groundchat.search.ingest as ingest_module
from groundchat.corpus.source_checks import CHECKS_KEY, SourceCheck, checked_sources
from groundchat.search.embedded import EmbeddedStore
from groundchat.search.ingest import manifest, run_ingest
from tests.corpus_support import WordHashEmbedder

DAY_1 = 1_796_083_200  # 2026-12-01T00:00:00Z
DAY_2 = DAY_1 + 86_400


def _official_docs(tmp_path, text: str):
    """A small source standing in for one fetched from its official address."""
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "a.md").write_text(text)
    spec = next(s for s in manifest(tmp_path / "no-corpus", docs) if s.name == "docs")
    return dataclasses.replace(spec, official=True)


def _at(monkeypatch, seconds: int) -> None:
    monkeypatch.setattr(ingest_module.time, "time", lambda: seconds)


def test_a_fetched_source_is_recorded_as_checked_and_unchanged(tmp_path, monkeypatch):
    _at(monkeypatch, DAY_1)
    store = EmbeddedStore(tmp_path / "i.sqlite")
    run_ingest([_official_docs(tmp_path, "# A\n\nalpha\n")], store, WordHashEmbedder("m"))
    assert checked_sources(store.serving_meta()) == {"docs": SourceCheck(checked_at="2026-12-01T00:00:00Z", changed=False)}


def test_a_later_ingest_with_nothing_to_do_still_records_its_check(tmp_path, monkeypatch):
    spec = _official_docs(tmp_path, "# A\n\nalpha\n")
    store = EmbeddedStore(tmp_path / "i.sqlite")
    _at(monkeypatch, DAY_1)
    run_ingest([spec], store, WordHashEmbedder("m"))
    _at(monkeypatch, DAY_2)
    assert run_ingest([spec], store, WordHashEmbedder("m")).changed is False
    assert checked_sources(store.serving_meta()) == {"docs": SourceCheck(checked_at="2026-12-02T00:00:00Z", changed=False)}


def test_a_changed_official_text_the_index_did_not_take_is_recorded_as_changed(tmp_path, monkeypatch):
    store = EmbeddedStore(tmp_path / "i.sqlite")
    _at(monkeypatch, DAY_1)
    run_ingest([_official_docs(tmp_path, "# A\n\nalpha\n")], store, WordHashEmbedder("m"))
    amended = _official_docs(tmp_path, "# A\n\nalpha, amended\n")

    def broken(path):
        raise RuntimeError("converter failed")

    _at(monkeypatch, DAY_2)
    with pytest.raises(RuntimeError, match="converter failed"):
        run_ingest([dataclasses.replace(amended, convert=broken)], store, WordHashEmbedder("m"))
    assert checked_sources(store.serving_meta()) == {"docs": SourceCheck(checked_at="2026-12-02T00:00:00Z", changed=True)}
    # Once the amended text is indexed, the check and the index agree again.
    run_ingest([amended], store, WordHashEmbedder("m"))
    assert checked_sources(store.serving_meta())["docs"].changed is False


def test_a_source_read_from_a_local_folder_is_not_said_to_be_checked(tmp_path):
    store = EmbeddedStore(tmp_path / "i.sqlite")
    run_ingest([dataclasses.replace(_official_docs(tmp_path, "# A\n\nalpha\n"), official=False)], store, WordHashEmbedder("m"))
    assert json.loads(store.serving_meta()[CHECKS_KEY]) == {}
    assert checked_sources(store.serving_meta()) == {}


def test_a_check_against_an_index_that_records_no_text_hash_says_nothing():
    meta = {CHECKS_KEY: json.dumps({"eaa": {"checked_at": "2026-12-01T00:00:00Z", "hash": "abc"}})}
    assert checked_sources(meta) == {}
    assert checked_sources({CHECKS_KEY: "not json"}) == {}
