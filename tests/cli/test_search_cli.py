"""The corpus commands through argparse, on the real index."""
from __future__ import annotations

import argparse
import io
import json
import shutil

from groundchat.config import reset_settings_cache
from groundchat_cli.corpus import add_corpus_commands


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_corpus_commands(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_search_json_and_stdin_one_line_per_query(real_index, tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(real_index["path"], home / "index.sqlite")
    monkeypatch.setenv("GROUNDCHAT_HOME", str(home))
    reset_settings_cache()
    args = _parse(["search", "contrast ratio of text", "--json", "-k", "3"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outcome"] == "hit" and len(out["hits"]) == 3
    assert set(out["hits"][0]) == {"ref", "source", "section", "title", "url", "score"}
    assert out["debug"]["rrf_k"] == 60
    monkeypatch.setattr("sys.stdin", io.StringIO("target size\n\nconsumer definition\n"))
    args = _parse(["search", "-", "--leg", "bm25"])
    assert args.func(args) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    assert [x["query"] for x in lines] == ["target size", "consumer definition"]
    assert all(x["debug"]["leg"] == "bm25" for x in lines)


def test_search_without_index_says_unavailable(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GROUNDCHAT_HOME", str(tmp_path / "empty"))
    reset_settings_cache()
    args = _parse(["search", "anything"])
    assert args.func(args) == 2
    assert capsys.readouterr().out.startswith("unavailable: index_missing")


def test_eval_retrieval_through_the_router_counts_what_the_offline_answerer_would_find(real_index, tmp_path,
                                                                                       monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(real_index["path"], home / "index.sqlite")
    monkeypatch.setenv("GROUNDCHAT_HOME", str(home))
    reset_settings_cache()
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(row) for row in [
        {"q": "how many flashes per second is too many before it could trigger seizures?", "source": "wcag22",
         "gold": ["2.3.1"]},
        # Refused as off-topic by the router: not found, however well the search alone would do.
        {"q": "what is a good recipe for banana bread?", "source": "wcag22", "gold": ["2.1.1"]},
    ]) + "\n")
    args = _parse(["eval", "retrieval", str(questions), "--through-router", "--json"])
    assert args.func(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 2 and report["searched"] == 0.5 and report["found@5"] == 0.5
    args = _parse(["eval", "retrieval", str(questions), "--through-router"])
    assert args.func(args) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "through the router: 2 questions, 0.500 searched, 0.500 found in the first five")
