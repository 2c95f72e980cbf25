"""A cold start stays within its budget: each function's import loads no more modules than today's
count plus 15 %. A count, not a time: the suite runs on every core, where a timing is the
neighbours' as much as the import's. What is heavy is what loads many modules (boto3 adds about 180,
the X-Ray SDK about 60 more), so a change that loads something heavy at import (the X-Ray SDK, a
client built at import, the chat's modules in the share function) fails here. bench/cold_import.py
prints the times."""
from __future__ import annotations

import subprocess
import sys

import pytest

# Counted on Python 3.11: a bare start holds 68 modules; chat 600, share 362 after their import. The
# embedding model the chat loads at init (numpy, onnxruntime, tokenizers: about 150 more) loads at
# its startup, after the import, so that no question waits for it and a SnapStart snapshot holds it.
BUDGETS = {"chat_function.main": 690, "share_function.handler": 420}


def _modules_after(code: str) -> int:
    out = subprocess.run([sys.executable, "-c", f"import sys; {code}; print(len(sys.modules))"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


@pytest.mark.parametrize("module", sorted(BUDGETS))
def test_a_cold_import_stays_within_its_budget(module):
    loaded = _modules_after(f"import {module}")
    assert loaded <= BUDGETS[module], f"{module}: {loaded} modules after its import (budget {BUDGETS[module]})"


def test_the_share_function_does_not_load_the_chat_or_the_xray_sdk():
    code = ("import sys, share_function.handler; "
            "print(sorted(m for m in sys.modules if m.startswith(('chat_function', 'aws_xray_sdk', 'groundchat.chat.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == "[]"


def test_the_chat_function_loads_at_import_only_what_building_the_app_needs():
    """boto3 (with botocore's config), PyJWT and cryptography, the answer use case and the run list's
    shapes load with the first request that uses them; the embedding model with the app's startup
    (docs/engineering/cold-import.md)."""
    code = ("import sys, chat_function.main; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 's3transfer', 'jwt', 'cryptography', "
            "'numpy', 'onnxruntime', 'tokenizers') "
            "or m in ('botocore.config', 'groundchat.chat.answer', 'groundchat.web.run_pages')))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == "[]"


def test_the_chat_function_loads_its_embedding_model_at_startup():
    """uvicorn runs the app's startup before it listens, so the model is loaded before the Web
    Adapter's readiness check passes (and before a SnapStart snapshot), though not by the import."""
    code = ("import asyncio, chat_function.main as main; "
            "from groundchat.search.embeddings import shared_local_embedder; "
            "before = shared_local_embedder()._session is not None; "
            "assert main.warm_up_at_start in main.app.router.on_startup; "
            "asyncio.run(main.warm_up_at_start()); "
            "print(before, shared_local_embedder()._session is not None)")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == "False True"
