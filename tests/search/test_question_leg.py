"""The question leg: parts scored by their nearest question, of the nearest question's source, lent
to the candidates the other legs found; and question rows never served as passages."""
from __future__ import annotations

from groundchat.corpus.chunk import QUESTIONS, make_chunk
from groundchat.search.embedded import EmbeddedIndex, EmbeddedStore
from groundchat.search.question_leg import QUESTION_WEIGHT, part_scores, parts_of, question_leg
from groundchat.search.question_words import WORDS_WEIGHT
from groundchat.search.service import SearchService
from groundchat.search.types import LegHit
from tests.corpus_support import WordHashEmbedder


def _passage(source, section):
    return make_chunk(source=source, section=section, title=section, text=f"text of {section}", url="u")


def _row(part, score, answers="eaa", text=None):
    chunk = make_chunk(source=QUESTIONS, section=part, title=part, text=text or f"{part} asked {score}", url="",
                       meta={"answers": answers})
    return LegHit(chunk, score)


def test_a_passage_belongs_to_itself_its_article_its_annex_section_and_its_annex():
    assert parts_of("Article 4(5)") == {"Article 4(5)", "Article 4"}
    assert parts_of("Article 3(23)") == {"Article 3(23)", "Article 3"}
    assert parts_of("Annex I Section IV, point (c)") >= {"Annex I Section IV"}
    assert "Annex II" in parts_of("Annex II Section III, point (b)(i)")
    assert parts_of("Understanding 2.4.7 Benefits") >= {"2.4.7"}
    assert parts_of("Recital 41") == {"Recital 41"}


def test_a_part_scores_its_nearest_question_and_only_the_nearest_parts_count():
    rows = [_row("Article 4", 0.61), _row("Article 4", 0.80), _row("Article 31", 0.70), _row("Recital 41", 0.50)]
    assert part_scores(rows) == {"Article 4": 0.80, "Article 31": 0.70, "Recital 41": 0.50}
    assert part_scores(rows, parts=2) == {"Article 4": 0.80, "Article 31": 0.70}
    assert part_scores([]) == {}


def test_the_words_a_part_shares_add_to_its_likeness_but_never_bring_a_part():
    rows = [_row("Article 4", 0.80), _row("Article 3(22)", 0.70), _row("Recital 41", 0.65)]
    # Article 3(22)'s questions share the question's telling word; Article 9's too, but no vector found it.
    words = {"Article 3(22)": 1.0, "Recital 41": 0.25, "Article 9": 0.9}
    scores = part_scores(rows, words)
    assert scores == {"Article 3(22)": 0.70 + WORDS_WEIGHT, "Article 4": 0.80, "Recital 41": 0.65 + WORDS_WEIGHT * 0.25}
    assert max(scores, key=scores.get) == "Article 3(22)"
    assert part_scores(rows, {}) == part_scores(rows) == {"Article 4": 0.80, "Article 3(22)": 0.70, "Recital 41": 0.65}


def test_only_the_source_of_the_nearest_question_lends():
    rows = [_row("2.4.7", 0.9, answers="wcag22"), _row("Annex I Section I", 0.85), _row("2.4.13", 0.8, answers="wcag22")]
    assert part_scores(rows) == {"2.4.7": 0.9, "2.4.13": 0.8}
    rows[0] = _row("2.4.7", 0.7, answers="wcag22")
    assert part_scores(rows) == {"Annex I Section I": 0.85}


def test_the_leg_lends_to_the_candidates_of_the_nearest_parts_and_brings_nothing_new():
    article_4, article_31 = _passage("eaa", "Article 4(5)"), _passage("eaa", "Article 31(2)")
    recital, annex = _passage("eaa", "Recital 20"), _passage("eaa", "Annex II Section I, point 1(a)")
    candidates = {"vector": [LegHit(recital, 0.9), LegHit(article_31, 0.8)],
                  "bm25": [LegHit(article_4, 12.0), LegHit(article_31, 9.0), LegHit(annex, 3.0)]}
    rows = [_row("Article 4", 0.8), _row("Annex II", 0.75), _row("Article 31", 0.6), _row("Article 7", 0.95)]
    leg = question_leg(part_scores(rows), candidates)
    # Article 7 is nearest but no leg found it; Recital 20 was found but no question is like it.
    assert [(h.chunk.section, h.score) for h in leg] == [
        ("Article 4(5)", 0.8), ("Annex II Section I, point 1(a)", 0.75), ("Article 31(2)", 0.6)]
    assert question_leg({}, candidates) == []


def _index(tmp_path, embedder):
    texts = [
        ("wcag22", "2.4.7", "Focus visible: any keyboard operable interface has a mode where the focus indicator is visible"),
        ("eaa", "Article 3(23)", "microenterprise: a firm with a staff of under ten and a small turnover"),
        ("eaa", "Article 31(1)", "Member States shall adopt and publish the laws needed to comply by 28 June 2022"),
    ]
    chunks = [make_chunk(source=s, section=sec, title=sec, text=t, url=f"https://x/#{sec}") for s, sec, t in texts]
    asked = "we are eight people with a small turnover are we a microenterprise"
    chunks.append(make_chunk(source=QUESTIONS, section="Article 3(23)", title="Article 3(23)", text=asked, url="",
                             meta={"answers": "eaa"}))
    build = EmbeddedStore(tmp_path / "index.sqlite").begin(model_id=embedder.model_id, dimension=embedder.dimension)
    build.add(chunks, embedder.embed([c.text for c in chunks]))
    build.commit({"source_hashes": "{}"})
    return SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder), asked


def test_a_question_row_is_never_a_passage_even_asked_word_for_word(tmp_path):
    service, asked = _index(tmp_path, WordHashEmbedder())
    for leg in ("hybrid", "vector", "bm25"):
        result = service.search(asked, leg=leg)
        assert QUESTIONS not in {p.source for p in result.passages}
    result = service.search(asked)
    assert result.passages[0].section == "Article 3(23)"
    assert result.debug.record()["legs"]["questions"]["hits"] == 1
    assert result.debug.record()["weights"]["questions"] == QUESTION_WEIGHT == 1.0


def test_an_index_without_questions_searches_as_before(tmp_path):
    embedder = WordHashEmbedder()
    chunks = [make_chunk(source="eaa", section="Article 31(1)", title="Article 31(1)", text="laws by 28 June 2022",
                         url="u")]
    build = EmbeddedStore(tmp_path / "index.sqlite").begin(model_id=embedder.model_id, dimension=embedder.dimension)
    build.add(chunks, embedder.embed([c.text for c in chunks]))
    build.commit({"source_hashes": "{}"})
    result = SearchService(EmbeddedIndex(tmp_path / "index.sqlite"), embedder).search("by when was the law due")
    assert [p.section for p in result.passages] == ["Article 31(1)"]
    assert "questions" not in result.debug.record()["legs"]


def test_with_the_real_bank_a_situation_reaches_its_article_first(real_search):
    # The CE marking's rules (Articles 17 and 18), asked as hearsay: without the question leg they come
    # after the Act's scope and an importer's duties.
    question = "someone at a trade fair told me our kiosks need a CE sticker now, is that true?"
    without = SearchService(real_search.backend, real_search.embedder,
                            weights={"bm25": 1.0, "vector": 1.0, "questions": 0.0})
    assert without.search(question, k=5).passages[0].section not in ("Article 17", "Article 18(1)", "Article 18(2)")
    result = real_search.search(question, k=5)
    assert result.passages[0].section.startswith(("Article 17", "Article 18"))
    assert result.debug.record()["legs"]["questions"]["hits"] > 0


def test_a_new_index_swapped_in_brings_its_own_questions(tmp_path):
    # The embedded index keeps the question rows in memory; an ingest that swaps a new file in must
    # not leave the served search reading the old file's questions.
    embedder = WordHashEmbedder()
    path = tmp_path / "index.sqlite"

    def build(part):
        chunks = [make_chunk(source="eaa", section=s, title=s, text=f"text of {s} about kiosks", url="u")
                  for s in ("Article 4(1)", "Article 7(1)")]
        chunks.append(make_chunk(source=QUESTIONS, section=part, title=part, text="must our kiosk talk",
                                 url="", meta={"answers": "eaa"}))
        store = EmbeddedStore(path).begin(model_id=embedder.model_id, dimension=embedder.dimension)
        store.add(chunks, embedder.embed([c.text for c in chunks]))
        store.commit({"source_hashes": "{}"})

    build("Article 4")
    index = EmbeddedIndex(path)
    vector = embedder.embed_query("must our kiosk talk")
    assert [r.chunk.section for r in index.legs("", vector, 5, None, {"question_rows"})["question_rows"]] == ["Article 4"]
    build("Article 7")  # written beside it and moved over it: a new file
    assert [r.chunk.section for r in index.legs("", vector, 5, None, {"question_rows"})["question_rows"]] == ["Article 7"]
