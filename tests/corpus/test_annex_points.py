"""A long annex section is cited point by point; a short one stays whole."""
from __future__ import annotations

from groundchat.corpus.annex_points import first_point_names, split_section
from groundchat.corpus.chunk import whole_section


def _body() -> str:
    letters = "abcdefghijklmno"
    lines = ["Products shall meet the following points.", "1. Information on the product:"]
    lines += [f"({ch}) information point {ch} " + "word " * 20 for ch in "ab"]
    lines += ["2. User interface and functionality design:"]
    lines += [f"({ch}) interface point {ch} " + "word " * 20 for ch in letters]
    # Sub-points of (o): "(i)" here is a numeral, not the letter after "(h)".
    lines += [f"({r}) device kind {r} " + "word " * 30 for r in ("i", "ii", "iii")]
    lines += ["— shall have a dash indent that stays with its point"]
    lines += ["3. Support services shall give information."]
    return "\n".join(lines)


def test_a_short_section_stays_one_passage_under_its_own_name():
    [only] = split_section("Annex III", "Built environment", "(a) short point\n(b) another")
    assert only.section == "Annex III"
    assert only.text == "Annex III: Built environment\n(a) short point\n(b) another"


def test_a_long_section_is_split_at_its_points_with_names_titles_and_headings():
    body = _body()
    passages = split_section("Annex I Section I", "Products", body, max_passage=400)
    names = [p.section for p in passages]
    assert names[0] == "Annex I Section I, opening"
    assert names[0] in first_point_names("Annex I Section I")
    assert names[1:8] == [f"Annex I Section I, point 2({ch})" for ch in "acegikm"]  # two lettered points each
    assert passages[5].title == "Annex I Section I: Products, points 2(i) to 2(j)"
    assert passages[0].title == "Annex I Section I: Products, opening and point 1"
    # The letter after "(h)" is "(i)", the sub-points of "(o)" are numerals under it.
    assert "Annex I Section I, point 2(o)(i)" in names and "Annex I Section I, point 2(o)(iii)" in names
    assert {whole_section(n) for n in names} == {"Annex I Section I"}
    assert len(set(names)) == len(names)
    by_name = {p.section: p for p in passages}
    # A point under "2." carries its heading line; the dash indent stays with the point above it.
    o3 = by_name["Annex I Section I, point 2(o)(iii)"].text.split("\n")
    assert o3[0] == "Annex I Section I: Products, point 2(o)(iii)"
    assert o3[1] == "2. User interface and functionality design:" and o3[2].startswith("(o) interface point o")
    assert o3[-1].startswith("— shall have a dash indent")
    # Every line of the section is in some passage, in the section's order.
    own = [line for p in passages for line in p.text.split("\n")[1:]]
    firsts = [own.index(line) for line in body.split("\n")]
    assert firsts == sorted(firsts)


def test_points_are_packed_while_they_fit_and_a_range_is_named_in_the_title():
    passages = split_section("Annex I Section I", "Products", _body(), max_passage=600)
    packed = [p for p in passages if ", points " in p.title]
    assert packed, [p.title for p in passages]
    assert all(" to " in p.title for p in packed)
    # Within the budget, except a single point that has no sub-points to split at.
    assert all(len(p.text) <= 600 for p in passages if ", points " in p.title)


def test_whole_section_maps_every_kind_of_passage_back():
    assert whole_section("Annex I Section IV, point (g)") == "Annex I Section IV"
    assert whole_section("Annex VI, opening") == "Annex VI"
    assert whole_section("Annex III") == "Annex III"
    assert whole_section("Article 13(2)") == "Article 13"


def test_a_point_with_its_own_paragraph_before_its_list_keeps_it_and_heads_its_list_with_a_cut_line():
    paragraph = "2. Technical documentation " + " ".join(f"word{i}" for i in range(60))
    body = "\n".join(["1. Internal control " + "x " * 40, paragraph, "(a) a general description",
                      "(b) a list of standards " + "y " * 150, "3. Manufacturing " + "z " * 40])
    passages = {p.section: p for p in split_section("Annex IV", "Conformity", body, max_passage=400)}
    assert list(passages) == ["Annex IV, point 1", "Annex IV, point 2", "Annex IV, point 2(a)",
                              "Annex IV, point 2(b)", "Annex IV, point 3"]
    assert passages["Annex IV, point 2"].text.split("\n")[1:] == [paragraph]
    heading = passages["Annex IV, point 2(b)"].text.split("\n")[1]
    assert heading.startswith("2. Technical documentation word0") and heading.endswith(" …") and len(heading) <= 162
    assert paragraph.startswith(heading.removesuffix(" …"))


def test_a_long_section_without_points_stays_whole():
    [only] = split_section("Annex I Section V", "Emergency", "words " * 200)
    assert only.section == "Annex I Section V"
