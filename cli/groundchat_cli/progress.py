"""Progress bars for the ingest's stages (converting each source, embedding, writing), shown by
`groundchat ingest` and by `make run` when it builds the index."""
from __future__ import annotations

from typing import Any


class IngestBars:
    def __init__(self) -> None:
        self._bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        from tqdm import tqdm

        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = tqdm(total=total, desc=stage, unit="chunk" if stage == "embed" else "step", leave=True)
        bar.total = total
        bar.n = done
        bar.refresh()

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()
