"""The ingest checks our notes against the text it has just converted: on a copy of the real WCAG
source with one criterion renumbered (2.5.8 moved to the end of guideline 2.4, so it is 2.4.14) and
one criterion's text changed, "stop" fails the ingest and keeps the serving index, "warn" indexes
without the stale note and says so in its summary, and the scheduled function counts them."""
from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from groundchat.corpus.index_text import embedding_text
from groundchat.corpus.notes import FAILURES, NotesOutOfDate, load, text_sha256
from groundchat.search.embedded import EmbeddedStore
from groundchat.search.ingest import manifest, run_ingest
from tests.corpus_support import WordHashEmbedder

TARGET_SIZE = '<section data-include="sc/22/target-size-minimum.html" data-include-replace="true"></section>'
FOCUS_APPEARANCE = '<section data-include="sc/22/focus-appearance.html" data-include-replace="true"></section>'
# Distinctive words of two notes, as a phrase of the keyword leg's heading column.
TARGET_SIZE_WORDS = '"pagination links smaller"'
CONTRAST_WORDS = '"placeholder text or small print too faint"'


def _missing_2_4_14(spec) -> str:
    [renumbered] = [c for c in spec.convert(spec.path) if c.section == "2.4.14"]
    return ("wcag_failures.jsonl: no note for 2.4.14 (every success criterion has one; "
            f"its text_sha256: {text_sha256([renumbered])})")


def _line_of(section: str) -> int:
    [entry] = [e for e in load().entries(FAILURES) if e.section == section]
    return entry.line


@pytest.fixture
def wcag_copy(shared_corpus, tmp_path):
    """The WCAG source (Recommendation and Understanding) copied, its ingest spec, and an index built
    from it unchanged."""
    root = tmp_path / "corpus"
    shutil.copytree(shared_corpus / "wcag22" / "guidelines", root / "wcag22" / "guidelines")
    shutil.copytree(shared_corpus / "wcag22" / "understanding", root / "wcag22" / "understanding")
    [spec] = [s for s in manifest(root, tmp_path / "no-docs") if s.name == "wcag22"]
    store = EmbeddedStore(tmp_path / "i.sqlite")
    first = run_ingest([spec], store, WordHashEmbedder(), notes_check="stop", use_vector_cache=False)
    assert first.changed and first.notes_problems == []
    return {"guidelines": root / "wcag22" / "guidelines", "spec": spec, "store": store, "index": tmp_path / "i.sqlite"}


def _renumber_target_size(guidelines) -> None:
    index = guidelines / "index.html"
    html = index.read_text(encoding="utf-8")
    assert html.count(TARGET_SIZE) == 1 and html.count(FOCUS_APPEARANCE) == 1
    index.write_text(html.replace(TARGET_SIZE, "").replace(FOCUS_APPEARANCE, FOCUS_APPEARANCE + TARGET_SIZE),
                     encoding="utf-8")


def _headings_matching(index, phrase: str) -> list[str]:
    """The sections whose keyword heading holds the phrase, criterion and Understanding passages
    told apart: ["2.5.8", "Understanding"] when the criterion and some of its Understanding do."""
    with sqlite3.connect(index) as conn:
        sections = {row[0] for row in conn.execute(
            "SELECT c.section FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid WHERE chunks_fts MATCH ?",
            (f"title : {phrase}",))}
    return sorted({s.split(" ", 1)[0] for s in sections})


def test_a_renumbered_criterion_stops_the_ingest_naming_the_orphan_and_the_missing_note(wcag_copy):
    store = wcag_copy["store"]
    before = store.serving_meta()
    assert _headings_matching(wcag_copy["index"], TARGET_SIZE_WORDS) == ["2.5.8", "Understanding"]
    _renumber_target_size(wcag_copy["guidelines"])

    with pytest.raises(NotesOutOfDate) as stopped:
        run_ingest([wcag_copy["spec"]], store, WordHashEmbedder(), notes_check="stop")

    orphan = f"wcag_failures.jsonl:{_line_of('2.5.8')}: note for 2.5.8, which the converted text no longer has"
    missing = _missing_2_4_14(wcag_copy["spec"])
    assert [(p.what, p.section) for p in stopped.value.report.problems] == [("orphan", "2.5.8"), ("missing", "2.4.14")]
    assert stopped.value.report.lines() == [orphan, missing]
    message = str(stopped.value)
    assert message.startswith("2 note problem(s) against the converted text; ") and "GROUNDCHAT_NOTES_CHECK=warn" in message
    assert message.endswith(f":\n  {orphan}\n  {missing}")
    # The build never began: the index that serves is the one before, and no half-built file is left.
    assert store.serving_meta() == before
    assert not list(wcag_copy["index"].parent.glob("i.sqlite.building-*"))


def test_under_warn_the_renumbered_criterion_is_indexed_without_the_stale_note_and_reported(wcag_copy):
    store = wcag_copy["store"]
    _renumber_target_size(wcag_copy["guidelines"])

    summary = run_ingest([wcag_copy["spec"]], store, WordHashEmbedder(), notes_check="warn")

    orphan = f"wcag_failures.jsonl:{_line_of('2.5.8')}: note for 2.5.8, which the converted text no longer has"
    missing = _missing_2_4_14(wcag_copy["spec"])
    assert summary.changed and summary.notes_problems == [orphan, missing]
    assert summary.lines()[-3:] == ["  notes: 2 problem(s), indexed without the notes they name",
                                    f"    {orphan}", f"    {missing}"]
    sections = {c.section for c, _ in store.serving_chunks("wcag22")}
    assert "2.4.14" in sections and "2.5.8" not in sections
    # The criterion is indexed under its new number without the note of its old one.
    assert _headings_matching(wcag_copy["index"], TARGET_SIZE_WORDS) == []
    meta = store.serving_meta()
    assert json.loads(meta["notes_problems"]) == [orphan, missing]
    assert json.loads(meta["notes_withheld"]) == [[FAILURES, "2.5.8"]]
    # Nothing changed since: the next run does no work and still reports what the index lacks.
    again = run_ingest([wcag_copy["spec"]], store, WordHashEmbedder(), notes_check="warn")
    assert again.changed is False and again.notes_problems == [orphan, missing]


def test_under_warn_a_criterion_whose_text_changed_loses_its_note_in_both_legs_and_its_understanding(wcag_copy):
    store, index = wcag_copy["store"], wcag_copy["index"]
    contrast = wcag_copy["guidelines"] / "sc" / "20" / "contrast-minimum.html"
    html = contrast.read_text(encoding="utf-8")
    assert html.count("of at least 4.5:1, except") == 1
    contrast.write_text(html.replace("of at least 4.5:1, except", "of at least 4.5:1 (a change upstream), except"),
                        encoding="utf-8")
    assert _headings_matching(index, CONTRAST_WORDS) == ["1.4.3", "Understanding"]

    summary = run_ingest([wcag_copy["spec"]], store, WordHashEmbedder(), notes_check="warn")

    [problem] = summary.notes_problems
    assert problem.startswith(f"wcag_failures.jsonl:{_line_of('1.4.3')}: note for 1.4.3 was written for another text")
    note = load().get(FAILURES, "1.4.3")
    # The keyword leg: the note is in no heading. The other criteria keep theirs.
    assert _headings_matching(index, CONTRAST_WORDS) == []
    assert _headings_matching(index, TARGET_SIZE_WORDS) == ["2.5.8", "Understanding"]
    # The vectors: the changed criterion's, and those of its unchanged Understanding passages (same
    # chunk ids as before, embedded with the note then), are of the text without the note.
    embedder = WordHashEmbedder()
    stored = {c.section: (c, v) for c, v in store.serving_chunks("wcag22")}
    understanding = sorted(s for s in stored if s.startswith("Understanding 1.4.3"))
    assert understanding
    for section in ["1.4.3", *understanding]:
        chunk, vector = stored[section]
        with_note = embedding_text(chunk)
        assert f"\n{note}\n" in with_note  # what the full notes would have given
        without = with_note.replace(f"\n{note}\n", "\n", 1)
        assert vector.tolist() == pytest.approx(embedder.embed([without])[0].tolist()), section
    unchanged, vector = stored["1.4.4"]
    assert vector.tolist() == pytest.approx(embedder.embed([embedding_text(unchanged)])[0].tolist())


def test_the_scheduled_ingest_warns_and_counts_the_problems_as_a_metric(monkeypatch, capsys):
    from groundchat.config import reset_settings_cache
    from groundchat.search.ingest import IngestSummary
    from ingest_function import handler as module
    from tests.lambda_support import LambdaContext

    problems = ["wcag_failures.jsonl:63: note for 2.5.8, which the converted text no longer has",
                "wcag_failures.jsonl: no note for 2.4.14 (every success criterion has one)"]
    calls = []

    def run_ingest(specs, store, embedder, *, force=False, notes_check=None, **_):
        calls.append(notes_check)
        return IngestSummary(changed=True, model_id="m", total_chunks=3, notes_problems=problems)

    monkeypatch.setenv("GROUNDCHAT_NOTES_CHECK", "warn")  # as template.yaml sets it
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    reset_settings_cache()
    monkeypatch.setattr(module, "specs_for", lambda settings, workdir: [])
    monkeypatch.setattr(module, "open_index_store", lambda settings: "store")
    monkeypatch.setattr(module, "make_embedder", lambda model, region=None: "embedder")
    monkeypatch.setattr(module, "run_ingest", run_ingest)
    try:
        result = module.handler({"source": "aws.events"}, LambdaContext())
    finally:
        monkeypatch.undo()
        reset_settings_cache()

    assert calls == ["warn"]
    assert result["notes_problems"] == problems and result["summary"][-2:] == [f"    {line}" for line in problems]
    [emf] = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"NotesOutOfDate"' in line]
    assert emf["NotesOutOfDate"] == [2.0] and emf["service"] == "groundchat"
    # What NotesOutOfDateAlarm in template.yaml watches: the metric by its service dimension.
    [directive] = emf["_aws"]["CloudWatchMetrics"]
    assert directive["Metrics"] == [{"Name": "NotesOutOfDate", "Unit": "Count"}] and directive["Dimensions"] == [["service"]]


def test_the_ingest_setting_defaults_to_stop_and_refuses_anything_but_stop_or_warn(monkeypatch):
    from groundchat.config import Settings

    monkeypatch.delenv("GROUNDCHAT_NOTES_CHECK", raising=False)
    assert Settings().notes_check == "stop"
    monkeypatch.setenv("GROUNDCHAT_NOTES_CHECK", "ignore")
    with pytest.raises(ValueError, match="unknown notes check 'ignore'; valid: stop, warn"):
        Settings()
