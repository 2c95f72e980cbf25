"""A question that names one of the two texts gets that text's best passages first, the mixed list after."""
from __future__ import annotations

import pytest

from groundchat.corpus.chunk import make_chunk
from groundchat.search import pipeline as pipeline_module
from groundchat.search.named_source_first import named_first
from groundchat.search.types import BackendUnavailable, LegHit


def hit(source: str, section: str, score: float) -> LegHit:
    return LegHit(make_chunk(source=source, section=section, title=section, text=f"text of {section}", url="u"), score)


def test_the_exact_passages_then_the_named_texts_lead_then_the_mixed_list_in_its_order():
    mixed = [hit("wcag22", "2.3.1", 9.0), hit("wcag22", "2.3.2", 5.0), hit("wcag22", "2.2.2", 4.0),
             hit("eaa", "Article 4(1)", 3.0)]
    named = [hit("eaa", "Annex I Section I, point 2(i)", 0.9), mixed[3], hit("eaa", "Annex I Section VII", 0.5)]
    exact = 1  # the first passage of `mixed` was named by number
    out = named_first(mixed, named, exact, lead=2)
    assert [h.chunk.section for h in out] == ["2.3.1", "Annex I Section I, point 2(i)", "Article 4(1)", "2.3.2", "2.2.2"]
    scores = [h.score for h in out]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    # Nothing of the mixed list is dropped, nothing is there twice.
    assert {h.chunk.id for h in mixed} <= {h.chunk.id for h in out} and len(out) == len({h.chunk.id for h in out})


def test_with_nothing_named_by_number_the_named_texts_first_passages_lead():
    mixed = [hit("wcag22", "2.3.1", 2.0), hit("wcag22", "2.3.2", 1.0)]
    named = [hit("eaa", "Annex I Section I, point 2(i)", 0.4)]
    assert [h.chunk.section for h in named_first(mixed, named, 0)] == ["Annex I Section I, point 2(i)", "2.3.1", "2.3.2"]


TEXTS = [
    *(("wcag22", f"2.3.{n}", f"Flashing content: flashing flashes flash seizures flashing threshold rule {n}.", None)
      for n in range(1, 6)),
    ("eaa", "Annex I Section I, point 2(i)", "Products shall minimise the risk of triggering photosensitive seizures from flashing.", None),
    ("eaa", "Article 2(1)", "The Act covers the products listed here once they are sold.", None),
]


@pytest.fixture
def service(tmp_path, monkeypatch):
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.service import SearchService
    from tests.corpus_support import WordHashEmbedder
    from tests.search.test_embedded import _build

    # Few candidates, so that WCAG's five criteria on flashes fill both legs' lists.
    monkeypatch.setattr(pipeline_module, "CANDIDATES_PER_LEG", 3)
    embedder = WordHashEmbedder()
    _build(tmp_path / "index.sqlite", embedder, TEXTS)
    return SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder, max_excerpts=5)


def test_a_question_naming_the_act_finds_its_passage_that_the_mixed_candidates_crowded_out(service):
    plain = service.search("flashing flashes seizures")
    assert "eaa" not in [p.source for p in plain.passages] and "named_text" not in plain.debug.record()
    named = service.search("flashing flashes seizures: is there an EU rule under the EAA?")
    assert named.passages[0].section == "Annex I Section I, point 2(i)"
    assert named.debug.record()["named_text"]["source"] == "eaa"
    assert named.debug.record()["named_text"]["lead"][0] == named.passages[0].ref
    assert {p.section for p in named.passages[2:]} <= {f"2.3.{n}" for n in range(1, 6)}  # the mixed list follows


def test_a_source_filter_from_the_caller_is_left_alone(service):
    result = service.search("flashing flashes seizures under the EAA", sources=["wcag22"])
    assert {p.source for p in result.passages} == {"wcag22"} and "named_text" not in result.debug.record()


def test_when_the_named_search_fails_the_mixed_list_still_serves(service):
    legs = service.backend.legs
    calls = []

    def failing_second_call(*args, **kwargs):
        calls.append(args)
        if len(calls) > 1:
            raise BackendUnavailable("index_unavailable", "disk went away")
        return legs(*args, **kwargs)

    service.backend.legs = failing_second_call
    result = service.search("flashing flashes seizures under the EAA")
    assert result.outcome == "hit" and result.passages[0].source == "wcag22"
    assert result.debug.record()["named_text"] == {"source": "eaa", "error": str(BackendUnavailable("index_unavailable", "disk went away"))}


def test_a_mixed_list_already_led_by_the_named_text_needs_no_second_search():
    from groundchat.search.named_source_first import already_led

    led = [hit("eaa", "Article 2(1)", 3.0), hit("eaa", "Article 4(1)", 2.0), hit("wcag22", "1.1.1", 1.0)]
    assert already_led(led, "eaa", exact=0)
    assert not already_led(led, "wcag22", exact=0)
    # After a passage named by number, the two that follow it are what counts.
    assert not already_led([hit("wcag22", "1.4.3", 9.0), *led[1:]], "eaa", exact=0)
    assert not already_led([hit("wcag22", "1.4.3", 9.0), *led[1:]], "eaa", exact=1)
    assert already_led([hit("wcag22", "1.4.3", 9.0), *led[:2]], "eaa", exact=1)
    assert not already_led(led[:1], "eaa", exact=0)  # fewer than the lead: search it
