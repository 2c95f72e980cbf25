"""The README's configuration table names every setting the code reads, and nothing else."""
import re

from groundchat.config import Settings
from tests.conftest import REPO_ROOT


def test_every_setting_is_documented_in_the_readme_table():
    readme = (REPO_ROOT / "README.md").read_text()
    documented = set(re.findall(r"^\| `GROUNDCHAT_([A-Z_]+)` \|", readme, flags=re.M))
    declared = {name.upper() for name in Settings.model_fields}
    assert declared - documented == set(), "settings missing from the README table"
    assert documented - declared == set(), "README documents settings the code does not read"


def test_readme_opens_with_the_two_commands():
    head = (REPO_ROOT / "README.md").read_text().splitlines()[:10]
    assert any(line.startswith("make run") for line in head)
    assert any(line.startswith("make test") for line in head)
