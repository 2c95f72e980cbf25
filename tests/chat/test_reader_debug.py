"""What a reader sees of a search's debug record: how it worked, never an error's text."""
from groundchat.chat.reader_debug import for_reader


def test_the_named_texts_lead_is_shown_and_its_error_is_not():
    shown = for_reader({"legs": {}, "named_text": {"source": "eaa", "lead": ["aaaa1111", "bbbb2222"]}})
    assert shown["named_text"] == {"source": "eaa", "lead": ["aaaa1111", "bbbb2222"]}
    failed = for_reader({"legs": {}, "named_text": {"source": "eaa", "error": "ConnectionError: https://vpc-x.es.amazonaws.com"}})
    assert failed["named_text"] == {"source": "eaa", "failed": True}
    assert "amazonaws" not in str(failed)


def test_a_record_without_a_named_text_shows_none():
    assert "named_text" not in for_reader({"legs": {}, "fusion": "scores+rrf"})
    assert for_reader(None) is None


def test_the_graph_legs_counters_are_shown_and_its_failure_only_as_a_flag():
    record = {"legs": {"graph": {"hits": 4, "top": []}}, "graph_enabled": True, "graph_seeds": 5,
              "graph_entities": 9, "graph_expansion_hits": 41, "graph_hydrated": 4, "graph_read": 2,
              "legs_ran": ["bm25", "graph", "vector"]}
    shown = for_reader(record)
    assert {k: shown[k] for k in ("graph_enabled", "graph_seeds", "graph_entities", "graph_expansion_hits",
                                  "graph_hydrated")} == {"graph_enabled": True, "graph_seeds": 5, "graph_entities": 9,
                                                         "graph_expansion_hits": 41, "graph_hydrated": 4}
    assert shown["legs_ran"] == ["bm25", "graph", "vector"]
    assert for_reader({"legs": {}, "graph_enabled": False, "graph_error": "no_graph"})["graph_failed"] == "no_graph"
    failed = for_reader({"legs": {}, "graph_enabled": False, "graph_error": "upstream_timeout"})
    assert failed["graph_failed"] is True and "upstream_timeout" not in str(failed)
