"""`make run` loads the offline answerer's gate model while the server starts, not on the first question."""
from __future__ import annotations

import threading

from groundchat_cli.localstack import _warm_the_offline_gate
from groundchat.offline.topic_neighbours import local_topic_neighbours


def _warming() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "warm-offline-gate"]


def test_with_the_offline_answerer_the_gate_is_loaded_in_the_background(settings):
    assert settings.model == "offline" and settings.embedding_model.startswith("local:")
    local_topic_neighbours.cache_clear()  # a judge another test loaded would pass without the warming
    assert local_topic_neighbours(settings.embedding_model)._ready is None
    _warm_the_offline_gate(settings)
    for thread in _warming():
        thread.join(timeout=60)
    assert local_topic_neighbours(settings.embedding_model)._ready is not None


def test_with_a_model_configured_nothing_is_loaded(settings):
    before = len(_warming())
    _warm_the_offline_gate(settings.model_copy(update={"model": "bedrock:some-model"}))
    assert len(_warming()) == before


def test_the_warming_thread_is_handed_back_so_a_stop_can_wait_for_it(settings):
    # Stopped while the model loads, the process used to end under onnxruntime's threads and abort.
    thread = _warm_the_offline_gate(settings)
    assert isinstance(thread, threading.Thread) and thread.name == "warm-offline-gate"
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert _warm_the_offline_gate(settings.model_copy(update={"model": "bedrock:some-model"})) is None
