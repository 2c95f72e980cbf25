"""A corpus small enough to ingest in a test in seconds, in the folders the ingest's manifest
reads (wcag22/guidelines, the EAA's PDF, a docs folder): one principle, guideline and criterion and
one glossary term; a directive of two recitals, two articles and one annex, as a real PDF whose
text pypdf extracts line by line, the way it reads the Official Journal's. Every sentence is the
fixture's own invention: only the structure (the markers the converters read, the criterion's
handle and level) follows the real texts."""
from __future__ import annotations

from pathlib import Path

WCAG_INDEX = """<!doctype html>
<html><body>
<section class="principle" id="perceivable"><h2>Perceivable</h2>
<p>Invented test prose for the principle: a sentence of this fixture's own.</p>
<section class="guideline" id="distinguishable"><h3>Distinguishable</h3>
<p>Invented test prose for the guideline, written for this test.</p>
<section class="sc" id="contrast-minimum"><h4>Contrast (Minimum)</h4>
<p class="conformance-level">AA</p>
<p>Invented test prose for the criterion, naming a ratio of 4.5:1.</p>
</section>
</section>
</section>
<section id="glossary"><dl id="terms">
<dt><dfn id="dfn-contrast-ratio" data-lt="contrast ratios">contrast ratio</dfn></dt>
<dd><p>Invented test prose defining the fixture's one glossary term.</p></dd>
</dl></section>
</body></html>
"""

EAA_LINES = [
    "Whereas:",
    "(1) First invented recital of this fixture.",
    "(2) Second invented recital of this fixture.",
    "HAVE ADOPTED THIS DIRECTIVE:",
    "Article 1",
    "First invented heading",
    "1. First invented paragraph of the first article.",
    "2. Second invented paragraph of the first article.",
    "Article 2",
    "Second invented heading",
    "The second article's one invented sentence.",
    "ANNEX I",
    "INVENTED ANNEX TITLE",
    "The annex's one invented sentence.",
]

DOC = "# Small\n\nA page of the project's own docs.\n\n## Part\n\nIts one section.\n"


def text_pdf(lines: list[str]) -> bytes:
    """A one-page PDF holding `lines` in Helvetica, one text line each (no PDF library writes text here)."""
    def escape(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    content = "BT /F1 10 Tf 14 TL 40 800 Td " + " ".join(f"({escape(line)}) Tj T*" for line in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write_small_corpus(root: Path) -> Path:
    """The corpus folder (GROUNDCHAT_CORPUS_DIR); its docs are under root/docs (GROUNDCHAT_DOCS_DIR)."""
    guidelines = root / "wcag22" / "guidelines"
    guidelines.mkdir(parents=True, exist_ok=True)
    (guidelines / "index.html").write_text(WCAG_INDEX, encoding="utf-8")
    (root / "eaa").mkdir(exist_ok=True)
    (root / "eaa" / "CELEX_32019L0882_EN_TXT.pdf").write_bytes(text_pdf(EAA_LINES))
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "small.md").write_text(DOC, encoding="utf-8")
    return root
