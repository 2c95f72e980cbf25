"""Every command line the README shows under "Try it from a terminal" works as written beside
`groundchat serve` on a port other than 8000, from a shell that exports no PORT (127.0.0.1:8000 in
a line is read as the stack's port, as a reader running `PORT=… make run` would)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from groundchat_cli.stack_address import free_port
from tests.cli.test_serve_stack import shell, stacks  # noqa: F401  (fixtures)
from tests.conftest import REPO_ROOT


def readme_lines() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Try it from a terminal", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        for line in block.replace("\\\n", "").splitlines():
            if line.startswith((".venv/bin/groundchat", "curl")):
                lines.append(line)
    return lines


def test_the_readme_shows_commands_that_need_the_stack():
    lines = readme_lines()
    assert any(line.startswith(".venv/bin/groundchat try ") and "--url" not in line for line in lines)
    assert any(line.startswith("curl ") for line in lines)


def test_each_readme_line_works_beside_the_stack_on_another_port(real_index, stacks, shell):  # noqa: F811
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    home = Path(shell["GROUNDCHAT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(real_index["path"], home / "index.sqlite")  # the search index, already built
    port = free_port()
    stacks(port)
    for line in readme_lines():
        line = line.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        done = subprocess.run(["bash", "-c", line], cwd=REPO_ROOT, env=shell, capture_output=True, text=True, timeout=300)
        assert (line, done.returncode) == (line, 0), done.stderr
        assert done.stdout.strip(), line
        assert "Traceback" not in done.stderr, line
        if line.startswith("curl") and "image=@" in line:
            # The offline answerer reads no images: one line that says what to do instead.
            assert '"code":"images-not-accepted"' in done.stdout and "GROUNDCHAT_MODEL" in done.stdout
        elif line.startswith("curl") and '"stream":false' in line:
            # One JSON answer whose searches ran over the sources the line names (this stack
            # indexes no corpus: what they find is tests/chat_function/test_json_answer.py's).
            answer = json.loads(done.stdout)
            assert answer["done"] == "complete" and answer["tool_calls"][0]["name"] == "search_docs", done.stdout[:500]
            # The debug says who answered (the offline answerer, what it can do), then each search.
            assert answer["debug"]["answerer"] == "offline" and "GROUNDCHAT_MODEL" in answer["debug"]["answerer_notice"]
            assert [(d["sources"], d["request"]) for d in answer["debug"]["searches"]] == [(["eaa"], {"sources": ["eaa"], "top_k": 3})]
        elif line.startswith("curl"):
            assert "event: done" in done.stdout
