"""One copy of the local embedding model per process: the search, the recall, the offline topic
gate and the citation-support check each embed with it (each used to open its own onnxruntime
session of the same model, ~250 MiB and a pool of threads apiece). `bench/chat_memory.py` prints
the chat process's memory before and after answers."""
from __future__ import annotations

import subprocess
import sys

# Counted in a fresh interpreter: the sessions this test's own process already holds do not count.
SCRIPT = r"""
import onnxruntime
opened = []
class Counted(onnxruntime.InferenceSession):
    def __init__(self, *args, **kwargs):
        opened.append(args[0] if args else kwargs.get("path_or_bytes"))
        super().__init__(*args, **kwargs)
onnxruntime.InferenceSession = Counted

from groundchat.config import get_settings
from groundchat.grounding.citation_support import local_embedder
from groundchat.offline.topic_neighbours import local_topic_neighbours
from groundchat.search.embeddings import make_embedder

settings = get_settings()
assert settings.embedding_model.startswith("local:"), settings.embedding_model
users = {
    "search": make_embedder(settings.embedding_model, region=settings.aws_region),
    "recall": make_embedder(settings.embedding_model, region=settings.aws_region),
    "support check": local_embedder(),
}
gate = local_topic_neighbours(settings.embedding_model)
print(round(gate.margin("which context level is best for fewer violations?"), 3))
for name, embedder in users.items():
    assert embedder.embed(["a text " + name]).shape == (1, 384), name
print(len({id(e) for e in users.values()} | {id(gate._ready[0])}), len(opened))
"""


def test_the_search_the_recall_the_gate_and_the_support_check_share_one_session():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    margin, counts = done.stdout.strip().splitlines()
    assert float(margin) > 0  # the gate really judged with the model
    assert counts == "1 1"  # one embedder object, one onnxruntime session
