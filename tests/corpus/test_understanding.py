"""Understanding WCAG 2.2 is ingested linked to its criterion and labelled informative, never as the
criterion's normative text."""
from __future__ import annotations

from groundchat.corpus import understanding, wcag
from groundchat.corpus.index_text import embedding_text, keyword_fields, kind


def _by_section(shared_corpus):
    chunks = wcag.convert(shared_corpus / "wcag22" / "guidelines")
    return {c.section: c for c in chunks}, chunks


def test_every_criterion_has_its_understanding_linked_by_the_file_name(shared_corpus):
    by_section, chunks = _by_section(shared_corpus)
    understood = {c.meta["criterion"] for c in chunks if kind(c) == "understanding"}
    criteria = {c.section for c in chunks if kind(c) == "success-criterion"}
    assert understood == criteria
    contrast = by_section["Understanding 1.4.3"]
    assert contrast.url == "https://www.w3.org/WAI/WCAG22/Understanding/contrast-minimum.html"
    assert contrast.meta == {"kind": "understanding", "criterion": "1.4.3", "handle": "Contrast (Minimum)", "level": "AA"}
    assert by_section["Understanding 1.4.3 Benefits"].url.endswith("contrast-minimum.html#benefits")
    assert by_section["Understanding 2.5.8 Examples"].meta["criterion"] == "2.5.8"


def test_an_understanding_excerpt_says_it_is_informative_and_is_not_the_criterion(shared_corpus):
    by_section, _ = _by_section(shared_corpus)
    chunk = by_section["Understanding 1.4.3"]
    assert chunk.title == "Understanding 1.4.3 Contrast (Minimum) (informative)"
    first = chunk.text.split("\n")[0]
    assert first == ("Understanding WCAG 2.2 (informative) on 1.4.3 Contrast (Minimum) "
                     "(Level AA, under Guideline 1.4 Distinguishable)")
    assert chunk.text.split("\n")[1].startswith("Goal: ")  # the In brief list leads
    # The normative criterion stays its own chunk, at its own section, from the Recommendation.
    assert by_section["1.4.3"].url == "https://www.w3.org/TR/WCAG22/#contrast-minimum"
    assert "informative" not in by_section["1.4.3"].text
    assert all(len(c.text) < understanding.MAX_SECTION_CHARS + 600 for c in by_section.values() if kind(c) == "understanding")


def test_the_legs_read_what_the_criterion_is_about_not_the_shared_label(shared_corpus):
    by_section, _ = _by_section(shared_corpus)
    chunk = by_section["Understanding 1.4.3"]
    from groundchat.corpus.notes import FAILURES, load

    failures = load().get(FAILURES, "1.4.3")
    # The handle, then how people describe the criterion's failures, then the text.
    assert embedding_text(chunk).startswith(f"Contrast (Minimum)\n{failures}\nGoal: ")
    assert "Understanding WCAG 2.2 (informative)" not in embedding_text(chunk)
    heading, body = keyword_fields(chunk)
    assert heading == f"1.4.3 Contrast (Minimum) understanding. {failures}" and body.startswith("Goal: ")


def test_without_the_understanding_folder_only_the_recommendation_is_converted(shared_corpus, tmp_path):
    import shutil

    guidelines = tmp_path / "wcag22" / "guidelines"
    shutil.copytree(shared_corpus / "wcag22" / "guidelines", guidelines)
    chunks = wcag.convert(guidelines)
    assert not [c for c in chunks if kind(c) == "understanding"]
    assert len(chunks) == 4 + 13 + 87 + 101
