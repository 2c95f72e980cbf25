"""Write the sample benchmark (fixed seed) as JSONL in the import format.

    python infra/sample/generate.py [--out runs.jsonl] [--seed N]

The generator lives in the installed package (groundchat_cli.sample) because the app loads the
sample into an empty store at startup; this file is only the command-line door to it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from groundchat_cli.sample import SEED, sample_jsonl


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="write the sample benchmark runs as JSONL")
    ap.add_argument("--out", type=Path, default=None, help="output file (default: stdout)")
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    text = sample_jsonl(args.seed)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {text.count(chr(10))} runs to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
