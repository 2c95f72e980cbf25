"""The graph read from small texts: the references it parses, the terms it links, the parts and the
axe rules, and its round trip through the stored JSON."""
from __future__ import annotations

from groundchat.corpus.chunk import make_chunk
from groundchat.search.graph import Graph
from groundchat.search.graph_build import build_graph, references_in


def eaa(section, text, **meta):
    return make_chunk(source="eaa", section=section, title=section, text=text, url="https://x/", meta=meta)


def wcag(section, text, **meta):
    return make_chunk(source="wcag22", section=section, title=section, text=text, url="https://x/", meta=meta)


ACT = [
    eaa("Article 3(5)", "Article 3(5) ‘manufacturer’ means a party that builds an item and sells it under its own name", term="manufacturer", article="3"),
    eaa("Article 3(6)", "Article 3(6) ‘importer’ means a party that brings an item in from abroad, "
        "unlike a manufacturer as defined in point (5)", term="importer", article="3"),
    eaa("Article 4(1)", "Article 4 Sample rules, paragraph 1\n1. Items shall follow Annex I.", article="4"),
    eaa("Article 4(5)", "Article 4 Sample rules, paragraph 5\n5. Very small firms need not meet the "
        "rules referred to in paragraph 1 of this Article.", article="4"),
    eaa("Article 7(1)", "Article 7 Duties of makers, paragraph 1\n1. Manufacturers shall see that items "
        "satisfy Article 4(1).", article="7"),
    eaa("Article 7(2)", "Article 7 Duties of makers, paragraph 2\n2. Manufacturers shall write a file "
        "in accordance with Annex IV and store the logs of Article 4 of Directive 2016/2102.", article="7"),
    eaa("Article 9(1)", "Article 9 Duties of bringers-in, paragraph 1\n1. Importers shall look at the duties "
        "referred to in Articles 7 and 8 and at the party as defined in point (5) of Article 3.", article="9"),
    eaa("Annex I Section I, point 1", "Annex I Section I: rules in accordance with Article 4(1), point 1\n"
        "1. Details on the item as set out in Section II of this Annex.", points="1"),
    eaa("Annex I Section II, point (a)", "Annex I Section II: boxes, point (a)\n(a) the box.", points="(a)"),
    eaa("Annex IV, point 1", "Annex IV: CHECKING, point 1\n1. The manufacturer runs the check.", points="1"),
    eaa("Recital 41", "Manufacturers of reading tablets should tell importers."),
]


def edges(graph, kind):
    return {(a, b) for a, b, k in graph.edges if k == kind}


def test_explicit_references_are_parsed_to_the_parts_they_name():
    graph = build_graph(ACT, rule_criteria={})
    refers = edges(graph, "refers_to")
    assert ("eaa:Article 7(1)", "eaa:Article 4(1)") in refers
    assert ("eaa:Article 4(1)", "eaa:Annex I") in refers
    assert ("eaa:Article 7(2)", "eaa:Annex IV") in refers
    # "Articles 7 and 8": Article 7 is in the graph, Article 8 is not, so only the one edge.
    assert ("eaa:Article 9(1)", "eaa:Article 7") in refers
    assert not any(b == "eaa:Article 8" for _, b in refers)
    # "point (5) of Article 3" is the definition; inside Article 3, "point (5)" is too.
    assert ("eaa:Article 9(1)", "eaa:Article 3(5)") in refers
    assert ("eaa:Article 3(6)", "eaa:Article 3(5)") in refers
    # "paragraph 1 of this Article" is the passage's own article's paragraph.
    assert ("eaa:Article 4(5)", "eaa:Article 4(1)") in refers
    # "Section II of this Annex" is the passage's own annex's section.
    assert ("eaa:Annex I Section I, point 1", "eaa:Annex I Section II") in refers


def test_a_heading_reference_belongs_to_the_whole_and_another_acts_article_is_not_ours():
    graph = build_graph(ACT, rule_criteria={})
    refers = edges(graph, "refers_to")
    # Every point of Annex I Section I repeats its heading: the section refers to Article 4(1).
    assert ("eaa:Annex I Section I", "eaa:Article 4(1)") in refers
    assert ("eaa:Annex I Section I, point 1", "eaa:Article 4(1)") not in refers
    # "Article 4 of Directive 2016/2102" is another act's.
    assert ("eaa:Article 7(2)", "eaa:Article 4") not in refers
    assert references_in("see Article 4 of Directive 2016/2102 and Article 2(2) thereof", ACT[5]) == []


def test_a_defined_term_links_every_passage_that_uses_it_plural_included():
    graph = build_graph(ACT, rule_criteria={})
    uses = edges(graph, "uses_term")
    assert {a for a, b in uses if b == "eaa:Article 3(5)"} >= {
        "eaa:Article 7(1)", "eaa:Article 7(2)", "eaa:Annex IV, point 1", "eaa:Recital 41", "eaa:Article 3(6)"}
    assert ("eaa:Recital 41", "eaa:Article 3(6)") in uses  # "importers"
    assert ("eaa:Article 3(5)", "eaa:Article 3(5)") not in uses


def test_parts_join_their_wholes_and_the_wholes_are_nodes_without_passages():
    graph = build_graph(ACT, rule_criteria={})
    parts = edges(graph, "part_of")
    assert ("eaa:Article 7(1)", "eaa:Article 7") in parts
    assert ("eaa:Annex I Section I, point 1", "eaa:Annex I Section I") in parts
    assert ("eaa:Annex I Section I", "eaa:Annex I") in parts
    assert ("eaa:Annex IV, point 1", "eaa:Annex IV") in parts
    assert graph.nodes["eaa:Article 7"].kind == "article" and graph.nodes["eaa:Article 7"].passages == ()
    assert graph.nodes["eaa:Article 7(1)"].kind == "paragraph"
    assert graph.nodes["eaa:Article 3(5)"].kind == "definition"
    assert graph.nodes["eaa:Annex I Section I, point 1"].passages == (ACT[7].id,)


def test_wcag_criteria_join_guidelines_understanding_glossary_and_axe_rules():
    texts = [
        wcag("Principle 1", "Principle 1 Perceivable\nGuidelines: 1.4", kind="principle"),
        wcag("Guideline 1.4", "Guideline 1.4 Distinguishable\nSuccess criteria: 1.4.3 Contrast", kind="guideline"),
        wcag("1.4.3", "Success Criterion 1.4.3 Contrast (Minimum)\nWords stand out from their background; "
             "see also 1.4.6.", kind="success-criterion", guideline="1.4"),
        wcag("1.4.6", "Success Criterion 1.4.6 Contrast (Enhanced)\nWords stand out even more.", kind="success-criterion", guideline="1.4"),
        wcag("Understanding 1.4.3 Benefits", "Readers with weak sight need text with enough contrast ratio.",
             kind="understanding", criterion="1.4.3"),
        wcag("Glossary: contrast ratio", "contrast ratio: how far apart two colours are in lightness", kind="term"),
    ]
    graph = build_graph(texts, rule_criteria={"color-contrast": ["1.4.3"], "color-contrast-enhanced": ["1.4.6"],
                                              "region": []})
    parts = edges(graph, "part_of")
    assert {("wcag22:Understanding 1.4.3 Benefits", "wcag22:1.4.3"), ("wcag22:1.4.3", "wcag22:Guideline 1.4"),
            ("wcag22:Guideline 1.4", "wcag22:Principle 1")} <= parts
    assert ("wcag22:1.4.3", "wcag22:1.4.6") in edges(graph, "refers_to")
    assert ("wcag22:Understanding 1.4.3 Benefits", "wcag22:Glossary: contrast ratio") in edges(graph, "uses_term")
    assert edges(graph, "tested_by") == {("wcag22:1.4.3", "axe:color-contrast"), ("wcag22:1.4.6", "axe:color-contrast-enhanced")}
    assert "axe:region" not in graph.nodes  # a best practice names no criterion


def test_docs_and_the_question_bank_have_no_place_in_the_graph():
    doc = make_chunk(source="docs", section="a.md > A", title="A", text="Article 4(1) and 1.4.3", url="u")
    question = make_chunk(source="questions", section="Article 7", title="q", text="who is the manufacturer?", url="u")
    graph = build_graph([*ACT, doc, question], rule_criteria={})
    assert not [n for n in graph.nodes if n.startswith(("docs:", "questions:"))]


def test_the_stored_json_gives_back_the_same_graph_and_its_size_by_kind():
    graph = build_graph(ACT, rule_criteria={})
    again = Graph.from_json(graph.to_json())
    assert again.nodes == graph.nodes
    assert sorted(again.edges) == sorted(graph.edges)
    size = again.size()
    assert size["nodes"] == len(graph.nodes) and size["edges"] == len(graph.edges)
    assert size["edges_by_kind"]["refers_to"] == len(edges(graph, "refers_to"))
    assert size["nodes_by_kind"]["definition"] == 2
