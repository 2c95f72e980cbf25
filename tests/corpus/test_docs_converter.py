from __future__ import annotations

from groundchat.corpus import markdown_docs


def test_splits_by_heading_with_paths_and_anchors(tmp_path):
    (tmp_path / "levels").mkdir()
    (tmp_path / "levels" / "contexts.md").write_text(
        "# Context levels\n\nIntro text.\n\n## Costs\n\nCost per run.\n\n```\n# not a heading\n```\n\n"
        "### By model\n\nDetail.\n\n## Empty\n\n## Results\n\nNumbers.\n"
    )
    chunks = markdown_docs.convert(tmp_path)
    assert [c.section for c in chunks] == [
        "levels/contexts.md > Context levels",
        "levels/contexts.md > Context levels > Costs",
        "levels/contexts.md > Context levels > Costs > By model",
        "levels/contexts.md > Context levels > Results",
    ]
    costs = chunks[1]
    assert costs.url == "docs/levels/contexts.md#costs"
    assert "# not a heading" in costs.text and costs.title == "Costs"
    assert {c.source for c in chunks} == {"docs"}
    assert costs.updated_at is None  # not in a git repository: undated, not invented


def test_missing_docs_folder_gives_no_chunks(tmp_path):
    assert markdown_docs.convert(tmp_path / "absent") == []


def test_works_on_the_projects_docs_whatever_they_hold():
    from tests.corpus_support import REPO_ROOT

    for c in markdown_docs.convert(REPO_ROOT / "docs"):
        assert c.section.split(" > ")[0].endswith(".md")
        assert c.url.startswith("docs/") and c.text
