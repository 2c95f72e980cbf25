"""Retrieval quality on our own paraphrased questions, on the real corpus with the local model."""
from __future__ import annotations

import json

import pytest

from groundchat.corpus.annex_points import first_point_names
from groundchat_cli.retrieval_eval import evaluate, load_questions
from tests.corpus_support import REPO_ROOT

QUESTIONS = REPO_ROOT / "tests" / "eval" / "retrieval_questions.jsonl"
# Written before any tuning of the index text, query side or prior, and never tuned on: the check
# that what helped the first set is not fitted to it.
HELDOUT = REPO_ROOT / "tests" / "eval" / "retrieval_heldout.jsonl"
# A second set, written blind after all of the above and split by hash: its tune half has been read,
# its report half never.
SECOND_TUNE = REPO_ROOT / "tests" / "eval" / "users_words_second_tune.jsonl"
SECOND_REPORT = REPO_ROOT / "tests" / "eval" / "users_words_second_report.jsonl"
# A third and a fourth set, written blind after every change to the search; their misses were read
# once the sixth set was written, so they are tuning data since.
THIRD = REPO_ROOT / "tests" / "eval" / "users_words_third.jsonl"
FOURTH = REPO_ROOT / "tests" / "eval" / "users_words_fourth.jsonl"
# A fifth, written blind after this stop's changes and run once: never read.
FIFTH = REPO_ROOT / "tests" / "eval" / "users_words_fifth.jsonl"
# A sixth, written blind after the first five came from five groups and the gate learned likeness;
# run once, never read.
SIXTH = REPO_ROOT / "tests" / "eval" / "users_words_sixth.jsonl"
# A seventh (40 WCAG, 80 EAA), written blind at the end of that stop; run once, never read.
SEVENTH = REPO_ROOT / "tests" / "eval" / "users_words_seventh.jsonl"
# An eighth (40 WCAG, 80 EAA), written blind before the question leg, run once after it; never read.
EIGHTH = REPO_ROOT / "tests" / "eval" / "users_words_eighth.jsonl"
# Written blind after the bank's words (search/question_words.py) were decided, and run once.
NINTH = REPO_ROOT / "tests" / "eval" / "users_words_ninth.jsonl"
# Written blind before the graph leg and paragraph-level gold; run to report, never tuned on.
TENTH = REPO_ROOT / "tests" / "eval" / "users_words_tenth.jsonl"
ELEVENTH = REPO_ROOT / "tests" / "eval" / "users_words_eleventh.jsonl"


@pytest.mark.parametrize(("path", "size"), [(QUESTIONS, 60), (HELDOUT, 40)])
def test_question_set_is_well_formed(path, size):
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert len(rows) >= size
    assert {r["source"] for r in rows} == {"wcag22", "eaa"}
    assert all(r["gold"] and r["q"] for r in rows)


def test_the_held_out_set_shares_no_question_with_the_first():
    first = {q.q.lower() for q in load_questions(QUESTIONS)}
    assert not [q.q for q in load_questions(HELDOUT) if q.q.lower() in first]


@pytest.mark.parametrize("path", [QUESTIONS, HELDOUT, SECOND_TUNE, SECOND_REPORT, THIRD, FOURTH, FIFTH])
def test_every_gold_section_exists_in_the_index(real_search, path):
    for q in load_questions(path):
        for gold in q.gold:
            # An article by its first paragraph, an annex by its first section, a long annex section by
            # its first passage (corpus/annex_points.py).
            tries = [gold, gold + "(1)", *first_point_names(gold), gold + " Section I",
                     *first_point_names(gold + " Section I")]
            assert any(real_search.get_section(q.source, t) is not None for t in tries), gold


def test_on_the_first_sets_hybrid_still_finds_nearly_everything(real_search):
    # These sets keep close to the texts' own words, where the keyword leg alone is strong: the
    # fused list must not lose what it found (users' words are judged below, on the report split).
    first = evaluate(real_search, load_questions(QUESTIONS), leg="hybrid")["overall"]
    heldout = evaluate(real_search, load_questions(HELDOUT), leg="hybrid")["overall"]
    assert first["hit@5"] >= 0.9 and heldout["hit@5"] >= 0.9
    assert first["mrr"] >= 0.8 and heldout["mrr"] >= 0.8


MRR_NOISE = 0.01
USERS_TUNE = REPO_ROOT / "tests" / "eval" / "users_words_tune.jsonl"
# Written later, blind, to check what the tune split decided; read since, so it is tuning data too.
USERS_VALIDATE = REPO_ROOT / "tests" / "eval" / "users_words_validate.jsonl"
# Never tuned on: the figures the closing note and docs/engineering/retrieval-eval.md report.
USERS_REPORT = REPO_ROOT / "tests" / "eval" / "users_words_report.jsonl"


def test_the_users_words_splits_are_disjoint_and_cover_every_criterion():
    from tests.corpus_support import require_corpus

    reference = json.loads((require_corpus() / "reference" / "wcag22-success-criteria.json").read_text())
    criteria = {c["num"] for c in (reference if isinstance(reference, list) else reference["success_criteria"])}
    tune, validate, report = load_questions(USERS_TUNE), load_questions(USERS_VALIDATE), load_questions(USERS_REPORT)
    assert len(tune) + len(report) >= 200 and len(validate) == 160
    texts = [{q.q.lower() for q in split} for split in (tune, validate, report)]
    assert not texts[0] & texts[1] and not texts[0] & texts[2] and not texts[1] & texts[2]
    gold = {g for q in [*tune, *report] if q.source == "wcag22" for g in q.gold}
    assert len(criteria) == 87 and criteria <= gold
    second = [load_questions(SECOND_TUNE), load_questions(SECOND_REPORT)]
    assert sum(len(half) for half in second) == 120
    earlier = set().union(*texts)
    halves = [{q.q.lower() for q in half} for half in second]
    assert not halves[0] & halves[1] and not (halves[0] | halves[1]) & earlier
    third = {q.q.lower() for q in load_questions(THIRD)}
    assert len(third) == 120 and not third & (earlier | halves[0] | halves[1])
    fourth = load_questions(FOURTH)
    assert len({q.q.lower() for q in fourth}) == 120 and not {q.q.lower() for q in fourth} & (earlier | halves[0] | halves[1] | third)
    assert sum(q.source == "eaa" for q in fourth) == sum(q.source == "wcag22" for q in fourth) == 60


@pytest.mark.parametrize(("path", "hit_slack", "mrr_slack"), [
    (USERS_TUNE, 0, MRR_NOISE), (USERS_VALIDATE, 0, MRR_NOISE), (SECOND_TUNE, 0, MRR_NOISE),
    (USERS_REPORT, 0, MRR_NOISE), (SECOND_REPORT, 0, MRR_NOISE), (THIRD, 0, MRR_NOISE), (FOURTH, 0, MRR_NOISE),
    (FIFTH, 0, MRR_NOISE), (SIXTH, 0, MRR_NOISE), (SEVENTH, 0, MRR_NOISE), (EIGHTH, 0, MRR_NOISE),
    (NINTH, 0, MRR_NOISE)])
def test_in_users_words_hybrid_is_never_below_its_best_leg(real_search, path, hit_slack, mrr_slack):
    # Every set holds within one question. Until the question leg there were three gaps, held at one
    # question or 0.02 of MRR: on the second set's report half BM25 alone found one WCAG question more
    # in its first five (0.957 against 0.913, of 23), on the sixth set it put three more WCAG
    # questions' criterion first, and on the seventh its EAA MRR was 0.787 against 0.774. Hybrid is now
    # 0.957, 0.975 against 0.968 and 0.814 against 0.781 (docs/engineering/retrieval-eval.md).
    questions = load_questions(path)
    fused = evaluate(real_search, questions, leg="hybrid")["per_source"]
    for leg in ("bm25", "vector"):
        single = evaluate(real_search, questions, leg=leg)["per_source"]
        for source, figures in single.items():
            # Compared in questions (hit@5 is rounded to 3 places).
            found = round(fused[source]["hit@5"] * figures["n"])
            assert found >= round(figures["hit@5"] * figures["n"]) - hit_slack, (leg, source)
            # One question moving between rank 1 and 2 in a source of ~50 is 0.01 of MRR.
            assert fused[source]["mrr"] >= figures["mrr"] - mrr_slack, (leg, source)


def test_in_users_words_on_the_report_split(real_search):
    figures = evaluate(real_search, load_questions(USERS_REPORT), leg="hybrid")
    # Floors under today's figures (0.988 hit@5, 0.920 MRR; WCAG 0.988 / 0.950, EAA 0.988 / 0.889;
    # before the bank's words 0.982 / 0.905, EAA 0.976 / 0.854; before the question leg 0.964 / 0.888,
    # EAA 0.940 / 0.836; before the first five came from five articles or criteria, 0.946 / 0.863): a
    # change that loses ground fails here.
    assert figures["overall"]["hit@5"] >= 0.98
    assert figures["overall"]["mrr"] >= 0.91
    assert figures["per_source"]["wcag22"]["hit@5"] >= 0.98 and figures["per_source"]["wcag22"]["mrr"] >= 0.94
    assert figures["per_source"]["eaa"]["hit@5"] >= 0.98
    assert figures["per_source"]["eaa"]["mrr"] >= 0.88


def test_in_users_words_on_the_second_sets_report_half(real_search):
    figures = evaluate(real_search, load_questions(SECOND_REPORT), leg="hybrid")
    # Floors under today's figures (0.891 hit@5, 0.810 MRR in this index without our docs, EAA 0.844 /
    # 0.752: the duties' paragraphs in the bank put one article sixth that was fifth and raised the
    # MRR; before them 0.909 / 0.795; before the bank's words 0.855 / 0.757; before the question leg
    # 0.836 / 0.683; 0.764 / 0.628 before the first five came from five groups; as first run, 0.655 /
    # 0.479): below the first report split's, which is the measure of how far users' own words still
    # are. The annex sections by their points cost it MRR (0.653 to 0.634 with the docs);
    # the step was decided on the decision sets (docs/engineering/retrieval-eval.md). With
    # bge-small-en-v1.5: 0.873 / 0.785 (EAA 0.812 / 0.731).
    assert figures["overall"]["hit@5"] >= 0.87 and figures["overall"]["mrr"] >= 0.78


def test_in_users_words_on_the_third_set(real_search):
    figures = evaluate(real_search, load_questions(THIRD), leg="hybrid")
    # Floors under its figures (0.933 hit@5, 0.823 MRR; WCAG 0.967 / 0.859, EAA 0.900 / 0.787; before
    # the bank's words 0.925 / 0.789; before the question leg 0.908 / 0.748, EAA 0.867 / 0.657). Its
    # misses were read once the sixth set was written, so it is tuning data since. Unread, before the
    # first five came from five groups: 0.825 / 0.700; as first run: 0.725 / 0.559. With
    # bge-small-en-v1.5: 0.917 / 0.801 (EAA 0.883 / 0.783, WCAG 0.950 / 0.818).
    assert figures["overall"]["hit@5"] >= 0.91 and figures["overall"]["mrr"] >= 0.80
    assert figures["per_source"]["eaa"]["hit@5"] >= 0.88 and figures["per_source"]["wcag22"]["hit@5"] >= 0.95


def test_in_users_words_on_the_fourth_set(real_search):
    figures = evaluate(real_search, load_questions(FOURTH), leg="hybrid")
    # Floors under its figures (0.933 hit@5, 0.815 MRR; WCAG 1.000 / 0.887, EAA 0.867 / 0.743; before
    # the bank's words 0.942 / 0.803, EAA 0.900 / 0.740: three EAA questions that were fifth are now
    # sixth, and the MRR of the decision sets rose; before the question leg 0.942 / 0.761). Its
    # misses were read once the sixth set was written, so it is tuning data since. Unread, before the
    # first five came from five groups: 0.867 / 0.713; as first run: 0.817 / 0.667.
    assert figures["overall"]["hit@5"] >= 0.93 and figures["overall"]["mrr"] >= 0.80
    assert figures["per_source"]["eaa"]["hit@5"] >= 0.86 and figures["per_source"]["wcag22"]["hit@5"] >= 0.98


# The offline answerer end to end: its router's plan, then the search it plans. Before the router
# knew web content and a business's duties in everyday words (offline/router_topics.py), it refused
# or sent to the runs' data 5-9 % of the report sets' questions and 20 % of the decision sets', and
# found the gold passage in its first five for 0.59-0.79 of them (report 0.790, second report half
# 0.618, third 0.592, fourth 0.642).
ROUTED_FLOORS = [
    # set, share searched, found in the first five: floors under today's figures, with the gate's
    # likeness margin (offline/topic_neighbours.py) as the answerer weighs it
    (USERS_TUNE, 0.99, 0.99), (USERS_VALIDATE, 0.99, 0.93), (SECOND_TUNE, 0.98, 0.96),
    # 0.970 / 0.952, 0.982 / 0.873 (never read; 0.891 before the duties' paragraphs in the bank);
    # 0.975 / 0.908, 0.950 / 0.900 (read since the sixth set). Before the bank's words: 0.940, 0.836,
    # 0.900, 0.900 found. Before the question leg, and before a question naming neither text searched
    # both: 0.934, 0.782, 0.867, 0.875 found
    # With bge-small-en-v1.5 the second report half 0.982 / 0.855, the fifth 0.958 / 0.950, the tenth
    # 0.942 / 0.867.
    (USERS_REPORT, 0.96, 0.94), (SECOND_REPORT, 0.97, 0.85), (THIRD, 0.97, 0.90), (FOURTH, 0.94, 0.89),
    # 0.942 / 0.892 as first run, 0.967 / 0.942 before the question leg, 0.967 / 0.958 with MiniLM
    (FIFTH, 0.95, 0.95),
    # the sixth 0.958 / 0.958 (0.950 before the bank's words, 0.942 before the question leg), the
    # seventh 0.958 / 0.950 (0.917, 0.908), the eighth, written blind before the question leg, 0.950 /
    # 0.892 (0.908 before the duties' paragraphs in the bank, 0.900 before the question leg)
    (SIXTH, 0.95, 0.95), (SEVENTH, 0.95, 0.94), (EIGHTH, 0.94, 0.89),
    # the ninth, written blind after the bank's words and run once: 0.958 / 0.933
    (NINTH, 0.95, 0.92),
    # the tenth, written blind before the graph leg: 0.950 / 0.892
    (TENTH, 0.94, 0.86),
]


@pytest.mark.parametrize(("path", "searched", "found"), ROUTED_FLOORS)
def test_the_offline_answerer_reaches_the_passage_through_its_router(real_search, topic_margin, path, searched, found):
    from groundchat_cli.router_eval import answered_from_the_texts
    from tests.offline.test_offline_router import FACETS, RULES

    figures = answered_from_the_texts(real_search, load_questions(path), FACETS, RULES, topic=topic_margin)
    assert figures["searched"] >= searched and figures["found@5"] >= found


def test_in_users_words_on_the_fifth_set(real_search):
    assert len(load_questions(FIFTH)) == 120
    figures = evaluate(real_search, load_questions(FIFTH), leg="hybrid")
    # Floors under its figures (1.000 hit@5, 0.934 MRR; WCAG 1.000 / 0.969, EAA 1.000 / 0.899; before
    # the bank's words 1.000 / 0.934, EAA 1.000 / 0.921; before the question leg 0.983 / 0.914); as first run 0.975 / 0.900, and the stop before it wrote it
    # 0.967 / 0.887 (EAA 0.950 / 0.849).
    assert figures["overall"]["hit@5"] >= 0.98 and figures["overall"]["mrr"] >= 0.92
    assert figures["per_source"]["eaa"]["hit@5"] >= 0.98 and figures["per_source"]["wcag22"]["hit@5"] >= 0.98


def test_in_users_words_on_the_sixth_set(real_search):
    questions = load_questions(SIXTH)
    assert len(questions) == 120 and sum(q.source == "eaa" for q in questions) == 60
    earlier = {q.q.lower() for path in (USERS_TUNE, USERS_VALIDATE, USERS_REPORT, SECOND_TUNE, SECOND_REPORT, THIRD,
                                        FOURTH, FIFTH) for q in load_questions(path)}
    assert not {q.q.lower() for q in questions} & earlier
    figures = evaluate(real_search, questions, leg="hybrid")
    # Floors under its figures (0.992 hit@5, 0.958 MRR; WCAG 1.000 / 1.000, EAA 0.983 / 0.915, 0.929
    # before the duties' paragraphs in the bank; before
    # the bank's words 0.992 / 0.932, EAA 0.983 / 0.890; as first run, before the question leg, 0.983 /
    # 0.903): both sources over the goal of 0.95 / 0.85.
    assert figures["overall"]["hit@5"] >= 0.98 and figures["overall"]["mrr"] >= 0.95
    assert figures["per_source"]["eaa"]["hit@5"] >= 0.96 and figures["per_source"]["wcag22"]["hit@5"] >= 0.98
    assert figures["per_source"]["eaa"]["mrr"] >= 0.91 and figures["per_source"]["wcag22"]["mrr"] >= 0.98


WRITTEN_BEFORE = (USERS_TUNE, USERS_VALIDATE, USERS_REPORT, SECOND_TUNE, SECOND_REPORT, THIRD, FOURTH, FIFTH, SIXTH)


@pytest.mark.parametrize(("path", "earlier", "overall", "eaa_hit", "wcag_hit", "by_paragraph"), [
    # The seventh: 0.992 hit@5, 0.935 MRR (WCAG 1.000 / 0.988, EAA 0.988 / 0.908); before the bank's
    # words 0.950 / 0.872 (EAA 0.925 / 0.814); as first run, before the question leg, 0.950 / 0.846.
    (SEVENTH, WRITTEN_BEFORE, (0.98, 0.92), 0.97, 0.97, None),
    # The eighth, written blind before the question leg was built: 0.950 / 0.860 (WCAG 1.000 / 0.988,
    # EAA 0.925 / 0.796: under the goal); with the bank's words and before Annex I Section IV had
    # questions that say "e-commerce", 0.958 / 0.858; before the words 0.950 / 0.838 (EAA 0.925 /
    # 0.764); the code before the leg gives 0.933 / 0.785 (EAA 0.900 / 0.705). With the duties'
    # paragraphs in the bank 0.942 / 0.853 (EAA 0.912 / 0.785): one EAA question fell to sixth.
    (EIGHTH, (*WRITTEN_BEFORE, SEVENTH), (0.94, 0.85), 0.91, 0.97, None),
    # The ninth, written blind after the bank's words were decided and run once: 0.975 / 0.940 (WCAG
    # 1.000 / 0.975, EAA 0.963 / 0.923: both over the goal); the code before the words gives 0.975 /
    # 0.936 (EAA 0.963 / 0.929, WCAG 1.000 / 0.950).
    (NINTH, (*WRITTEN_BEFORE, SEVENTH, EIGHTH), (0.97, 0.93), 0.95, 0.98, None),
    # The tenth, written blind before the graph leg: 0.950 hit@5, 0.809 MRR (WCAG 1.000 / 0.956, EAA
    # 0.925 / 0.735, under the goal). The 59 questions with one right paragraph: 0.915 / 0.728 by
    # article, 0.746 / 0.567 by paragraph; before the duties' paragraphs were in the bank, 0.644 /
    # 0.463 by paragraph.
    # With bge-small-en-v1.5: 0.933 / 0.820 (EAA 0.900 / 0.751, WCAG 1.000 / 0.958); by article 0.881 /
    # 0.757, by paragraph 0.712 / 0.596.
    (TENTH, (*WRITTEN_BEFORE, SEVENTH, EIGHTH, NINTH), (0.93, 0.80), 0.90, 0.98, ((0.88, 0.75), (0.71, 0.59))),
])
def test_in_users_words_on_the_sets_written_last(real_search, path, earlier, overall, eaa_hit, wcag_hit,
                                                 by_paragraph):
    questions = load_questions(path)
    assert len(questions) == 120 and sum(q.source == "eaa" for q in questions) == 80
    asked_before = {q.q.lower() for before in earlier for q in load_questions(before)}
    assert not {q.q.lower() for q in questions} & asked_before
    figures = evaluate(real_search, questions, leg="hybrid")
    # Floors under each set's figures.
    assert figures["overall"]["hit@5"] >= overall[0] and figures["overall"]["mrr"] >= overall[1]
    assert figures["per_source"]["eaa"]["hit@5"] >= eaa_hit and figures["per_source"]["wcag22"]["hit@5"] >= wcag_hit
    if by_paragraph is not None:
        (article_hit, article_mrr), (paragraph_hit, paragraph_mrr) = by_paragraph
        by = figures["paragraph"]["eaa"]
        assert by["article"]["n"] == by["paragraph"]["n"] == 59
        assert by["article"]["hit@5"] >= article_hit and by["article"]["mrr"] >= article_mrr
        assert by["paragraph"]["hit@5"] >= paragraph_hit and by["paragraph"]["mrr"] >= paragraph_mrr


def test_in_users_words_on_the_eleventh_set(real_search):
    """Written blind before the embedding models were compared and the ranking step learned; run
    once at the end (docs/engineering/retrieval-eval.md): 0.982 hit@5, 0.935 MRR (WCAG 1.000 /
    0.988, EAA 0.971 / 0.904); the 59 with one right paragraph 0.983 / 0.930 by article, 0.763 /
    0.708 by paragraph. With bge-small-en-v1.5: 0.991 / 0.920 (WCAG 1.000 / 1.000, EAA 0.986 / 0.874);
    by article 0.983 / 0.891, by paragraph 0.797 / 0.725. Floors under those figures."""
    questions = load_questions(ELEVENTH)
    assert len(questions) == 109 and sum(q.source == "eaa" for q in questions) == 69
    earlier = (*WRITTEN_BEFORE, SEVENTH, EIGHTH, NINTH, TENTH)
    assert not {q.q.lower() for q in questions} & {q.q.lower() for before in earlier for q in load_questions(before)}
    figures = evaluate(real_search, questions, leg="hybrid")
    assert figures["overall"]["hit@5"] >= 0.97 and figures["overall"]["mrr"] >= 0.92
    assert figures["per_source"]["eaa"]["hit@5"] >= 0.97 and figures["per_source"]["eaa"]["mrr"] >= 0.87
    assert figures["per_source"]["wcag22"]["hit@5"] >= 0.97 and figures["per_source"]["wcag22"]["mrr"] >= 0.98
    by = figures["paragraph"]["eaa"]
    assert by["article"]["n"] == by["paragraph"]["n"] == 59
    assert by["article"]["hit@5"] >= 0.98 and by["article"]["mrr"] >= 0.89
    assert by["paragraph"]["hit@5"] >= 0.79 and by["paragraph"]["mrr"] >= 0.72
