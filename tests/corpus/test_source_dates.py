"""Source dates strictly as UTC: a date without a zone, or at another offset, is refused at ingest
with its file and line; the serving index is left as it was."""
from __future__ import annotations

import pytest

from groundchat.corpus import markdown_docs
from groundchat.corpus.dates import SourceDateError, parse_utc
from groundchat.search.embedded import EmbeddedStore
from groundchat.search.ingest import manifest, run_ingest
from tests.corpus_support import WordHashEmbedder


@pytest.mark.parametrize("text, stored", [
    ("2025-03-01T00:00:00Z", "2025-03-01T00:00:00Z"),
    ("2025-03-01T10:20Z", "2025-03-01T10:20:00Z"),
    ("2025-03-01T10:20:30.123456Z", "2025-03-01T10:20:30Z"),
    ("2025-03-01T10:20:30+00:00", "2025-03-01T10:20:30Z"),
    ("  2025-03-01T10:20:30Z ", "2025-03-01T10:20:30Z"),
])
def test_utc_dates_are_kept_in_one_form(text, stored):
    assert parse_utc(text, file="docs/a.md", line=2) == stored


@pytest.mark.parametrize("text, says", [
    ("2025-03-01T10:20:30", "has no time zone"),
    ("2025-03-01", "is a day without a time or time zone"),
    ("2025-03-01T10:20:30+02:00", "is at offset +02:00, not UTC"),
    ("2025-03-01T10:20:30-05:00", "is at offset -05:00, not UTC"),
    ("2025-03-01T10:20:30-00:00", "is at offset -00:00, not UTC"),
    ("2025-02-30T10:20:30Z", "is not a real date and time"),
    ("1 March 2025", "is not a date and time"),
    ("", "is not a date and time"),
])
def test_anything_else_is_refused_in_one_line_with_file_and_line(text, says):
    with pytest.raises(SourceDateError) as refused:
        parse_utc(text, file="docs/a.md", line=2)
    message = str(refused.value)
    assert message.startswith(f"docs/a.md:2: source date {text.strip()!r} {says}") and "\n" not in message
    assert message.endswith("write it in UTC, e.g. 2025-03-01T00:00:00Z") or "real date" in message


def test_a_docs_front_matter_date_is_the_files_date_and_not_indexed_as_text(tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: A\nupdated: 2025-03-01T08:00:00Z\n---\n# A\n\nalpha\n")
    chunks = markdown_docs.convert(tmp_path)
    assert [(c.section, c.updated_at) for c in chunks] == [("a.md > A", "2025-03-01T08:00:00Z")]
    assert "updated" not in chunks[0].text and "title:" not in chunks[0].text


def test_a_docs_date_without_a_zone_is_refused_with_its_file_and_line(tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: A\nupdated: 2025-03-01 08:00\n---\n# A\n\nalpha\n")
    with pytest.raises(SourceDateError, match=r"a\.md:3: source date '2025-03-01 08:00' is not a date and time"):
        markdown_docs.convert(tmp_path)


def test_the_ingest_refuses_a_bad_date_and_keeps_the_serving_index(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("---\nupdated: 2025-03-01T08:00:00Z\n---\n# A\n\nalpha\n")
    specs = [s for s in manifest(tmp_path / "no-corpus", docs) if s.name == "docs"]
    store = EmbeddedStore(tmp_path / "i.sqlite")
    assert run_ingest(specs, store, WordHashEmbedder("m1")).total_chunks == 1
    before = store.serving_meta()
    (docs / "a.md").write_text("---\nupdated: 2025-03-01T10:00:00+02:00\n---\n# A\n\nalpha, changed\n")
    with pytest.raises(SourceDateError) as refused:
        run_ingest(specs, store, WordHashEmbedder("m1"))
    assert str(refused.value) == (f"{docs / 'a.md'}:2: source date '2025-03-01T10:00:00+02:00' is at offset +02:00, "
                                  "not UTC: write it in UTC, e.g. 2025-03-01T00:00:00Z")
    assert store.serving_meta() == before  # the index that serves is the one before


def test_the_ingest_checks_every_chunks_date_whatever_converter_made_it(tmp_path):
    from groundchat.corpus.chunk import make_chunk
    from groundchat.search.ingest import SourceSpec, strict_dates

    spec = SourceSpec("docs", tmp_path / "x", lambda p: [], lambda p: [])
    ok = make_chunk(source="docs", section="s", title="t", text="x", url="u", updated_at="2025-03-01T08:00:00+00:00")
    assert strict_dates(spec, [ok])[0].updated_at == "2025-03-01T08:00:00Z"
    local = make_chunk(source="docs", section="Costs", title="t", text="y", url="u", updated_at="2025-03-01T08:00:00")
    with pytest.raises(SourceDateError, match=r"\(section Costs\): source date '2025-03-01T08:00:00' has no time zone"):
        strict_dates(spec, [local])


def test_the_projects_docs_have_strict_dates_or_none():
    from tests.corpus_support import REPO_ROOT

    for c in markdown_docs.convert(REPO_ROOT / "docs"):
        assert c.updated_at is None or parse_utc(c.updated_at, file=c.section) == c.updated_at
