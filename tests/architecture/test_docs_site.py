"""The README is the two commands and where to read on; the rest is the MkDocs site built from
docs/, strictly (no broken link, every page in the navigation), with the configuration table
written from `Settings`; the site's own pages never reach the chat's corpus."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import yaml

from groundchat.config import Settings
from groundchat.corpus.markdown_docs import source_files
from tests.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"


def site_hooks():
    spec = importlib.util.spec_from_file_location("docs_site", REPO_ROOT / "infra" / "docs_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nav_pages(entries) -> set[str]:
    pages: set[str] = set()
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            pages |= nav_pages(value)
        else:
            pages.add(value)
    return pages


def test_readme_is_short_and_opens_with_the_two_commands():
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 100
    assert any(line.startswith("make run") for line in lines[:10])
    assert any(line.startswith("make test") for line in lines[:10])


def test_every_setting_has_a_description_and_a_row_in_the_generated_table():
    missing = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert missing == []
    table = site_hooks().settings_table()
    rows = [line for line in table.splitlines() if line.startswith("| `GROUNDCHAT_")]
    assert [row.split("`")[1] for row in rows] == [f"GROUNDCHAT_{name.upper()}" for name in Settings.model_fields]
    assert "| `GROUNDCHAT_BUDGET_USD` | `1` | the cap on the whole chat's spending |" in rows


def test_every_page_is_in_the_navigation():
    config = yaml.safe_load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python", "#"))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - nav_pages(config["nav"]) == set()
    assert nav_pages(config["nav"]) - pages == set()


def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "site" / "guide" / "configuration.html").read_text(encoding="utf-8")
    assert "GROUNDCHAT_MAX_QUESTION_CHARS" in page and "settings-table" not in page


def test_the_guide_and_the_architecture_are_not_indexed_into_the_corpus():
    indexed = {p.relative_to(DOCS).parts[0] for p in source_files(DOCS)}
    assert indexed & {"guide", "architecture", "engineering", "index.md"} == set()
    assert "benchmark.md" in indexed
