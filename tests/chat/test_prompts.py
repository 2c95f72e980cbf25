"""The system prompt states each rule once: costs as their text twin, Understanding as informative,
off-topic and run-something requests declined, views only when offered."""
from groundchat.chat.prompts import system_prompt


def test_the_prompt_says_how_to_quote_costs_and_what_to_decline():
    prompt = system_prompt("groundchat", ["compare_contexts", "search_docs"])
    assert 'never call a non-zero cost "$0"' in prompt
    assert "cost_text" in prompt
    assert "informative W3C guidance, not the criterion's text" in prompt
    assert "Decline questions outside the benchmark" in prompt and "run\nor change something" in prompt
    assert "show_view" not in prompt


def test_views_are_explained_only_to_a_caller_offered_them():
    assert "show_view" in system_prompt("groundchat", ["show_view"])


def test_the_fixed_part_of_a_step_fits_6000_characters_with_every_tool():
    import json

    from groundchat.tools.catalog import all_tools

    tools = all_tools()
    specs = sum(len(json.dumps(t.spec().model_dump())) for t in tools)
    prompt = system_prompt("groundchat", [t.name for t in tools])
    assert specs + len(prompt) <= 6000
    # Built once: the same objects on every step, byte-identical for prompt caching.
    assert tools[0].spec() is tools[0].spec()
    assert system_prompt("groundchat", [t.name for t in tools]) is prompt
