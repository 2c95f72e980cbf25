"""Paragraph-level gold beside article-level gold: the same questions counted both ways, on small
inline sets and a service that answers fixed passages."""
from __future__ import annotations

import json

import pytest

from groundchat.search.types import Passage, SearchResult
from groundchat_cli.retrieval_eval import evaluate, load_questions


class _Answers:
    """Serves fixed sections per question, as a search service would."""

    def __init__(self, served: dict[str, list[str]]) -> None:
        self.served = served
        self.asked: list[dict] = []

    def search(self, query, *, k=None, leg="hybrid", **switches):
        self.asked.append({"leg": leg, **switches})
        passages = [Passage(ref=f"r{i}", source="eaa", section=s, title=s, url="u", text="t", score=1.0 - i / 10)
                    for i, s in enumerate(self.served[query])]
        return SearchResult(outcome="hit", query=query, passages=passages)


def write(tmp_path, rows):
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_another_paragraph_of_the_article_counts_at_article_level_only(tmp_path):
    path = write(tmp_path, [
        {"q": "are tiny firms exempt?", "source": "eaa", "gold": ["Article 4"], "gold_paragraph": ["Article 4(5)"]},
        {"q": "who is a consumer?", "source": "eaa", "gold": ["Article 3(22)"], "gold_paragraph": ["Article 3(22)"]},
        {"q": "when does it apply?", "source": "eaa", "gold": ["Article 31"]},
    ])
    service = _Answers({
        "are tiny firms exempt?": ["Article 4(1)", "Article 13(1)", "Article 4(5)"],
        "who is a consumer?": ["Article 3(22)"],
        "when does it apply?": ["Article 31(2)"],
    })
    report = evaluate(service, load_questions(path), include_graph=False)
    both = report["paragraph"]["eaa"]
    # Only the two questions with a paragraph are counted in it: at article level both first...
    assert both["article"] == {"n": 2, "hit@1": 1.0, "hit@5": 1.0, "mrr": 1.0}
    # ...at paragraph level the exemption's own paragraph is third.
    assert both["paragraph"] == {"n": 2, "hit@1": 0.5, "hit@5": 1.0, "mrr": round((1 / 3 + 1) / 2, 3)}
    assert report["per_source"]["eaa"]["n"] == 3 and report["graph"] is False
    assert all(a["include_graph"] is False for a in service.asked)


def test_a_set_without_paragraph_gold_reports_no_paragraph_figures(tmp_path):
    path = write(tmp_path, [{"q": "when does it apply?", "source": "eaa", "gold": ["Article 31"]}])
    report = evaluate(_Answers({"when does it apply?": ["Recital 1"]}), load_questions(path))
    assert "paragraph" not in report and report["per_source"]["eaa"]["hit@5"] == 0.0


def test_a_paragraph_missing_from_the_first_five_counts_zero(tmp_path):
    path = write(tmp_path, [{"q": "q", "source": "eaa", "gold": ["Article 7"], "gold_paragraph": ["Article 7(2)", "Article 7(3)"]}])
    report = evaluate(_Answers({"q": ["Article 7(1)", "Article 7(4)"]}), load_questions(path))
    assert report["paragraph"]["eaa"]["paragraph"]["mrr"] == 0.0
    assert report["paragraph"]["eaa"]["article"]["mrr"] == 1.0


@pytest.mark.parametrize("bad", ["Article 4(5)", [""], [4]])
def test_a_gold_paragraph_that_is_not_a_list_of_sections_is_refused(tmp_path, bad):
    path = write(tmp_path, [{"q": "q", "source": "eaa", "gold": ["Article 4"], "gold_paragraph": bad}])
    with pytest.raises(ValueError, match="gold_paragraph"):
        load_questions(path)
