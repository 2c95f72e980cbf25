"""Build layers/core/groundchat/data/axe_rules.json, the facts table behind explain_rule and the
sample data, from the corpus mirror (axe-core's rule list and a WCAG 2.2 criteria list).

Only facts are kept: rule ids, tags, impact, help URL, and for each WCAG criterion its number,
handle, level and anchor. No descriptive text leaves the corpus, because the corpus texts reach
the project only through the ingest.

    python infra/sample/build_axe_rules.py [--corpus ../shared/corpus]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "layers" / "core" / "groundchat" / "data" / "axe_rules.json"
# Same rule as groundchat.benchmark.axe_rules: "wcag143" names 1.4.3; level tags (wcag2a, wcag21aa) do not match.
CRITERION_TAG = re.compile(r"^wcag(\d)(\d)(\d{1,2})$")


def build(corpus: Path) -> dict:
    rules_src = json.loads((corpus / "axe" / "axe-rules.json").read_text(encoding="utf-8"))
    sc_src = json.loads((corpus / "reference" / "wcag22-success-criteria.json").read_text(encoding="utf-8"))
    criteria = {}
    for sc in sc_src["success_criteria"]:
        criteria[sc["num"]] = {
            "handle": sc["handle"],
            "level": sc["level"] or None,
            # The anchor is the criterion's id in the WCAG 2.2 Recommendation.
            "anchor": sc["id"],
            "obsolete": str(sc.get("obsolete")).lower() == "true",
        }
    rules = {}
    for rule in sorted(rules_src, key=lambda r: r["id"]):
        derived = [".".join(m.groups()) for t in rule["tags"] if (m := CRITERION_TAG.match(t))]
        # Cross-check our tag parsing against axe's own parse before trusting either.
        if sorted(derived) != sorted(rule["wcagSuccessCriteria"]):
            raise SystemExit(f"{rule['id']}: tags name {derived}, axe says {rule['wcagSuccessCriteria']}")
        missing = [n for n in derived if n not in criteria]
        if missing:
            raise SystemExit(f"{rule['id']}: criteria {missing} are not in WCAG 2.2")
        rules[rule["id"]] = {"impact": rule["impact"], "tags": rule["tags"], "help_url": rule["helpUrl"]}
    return {
        "axe_version": "4.14.1",
        "wcag_version": "2.2",
        "wcag_url": "https://www.w3.org/TR/WCAG22/",
        "criteria": criteria,
        "rules": rules,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = ap.parse_args(argv)
    facts = build(args.corpus)
    OUT.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(facts['rules'])} rules, {len(facts['criteria'])} criteria")
    return 0


if __name__ == "__main__":
    sys.exit(main())
