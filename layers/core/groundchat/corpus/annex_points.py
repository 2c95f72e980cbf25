"""A long annex section of the Act as passages of its points.

Annex I Section I (every product's requirements) runs to 7,000 characters and Section IV (each
service's requirements) to 4,000. As one passage, a question about a ticket machine's time-out was
matched against all of it (the keyword leg divides by its length, the vector averages its windows),
and the excerpt a reader saw was its first 1,200 characters: the part's opening, not the point on
time-outs. So a section longer than `MAX_PASSAGE` is split at its points, and each passage reads on
its own: it is led by the section's title and by the opening line of each point it sits under
("2. User interface and functionality design …", "(o) … specific products:"), cut when long. Consecutive points are
packed into one passage while it stays within `MAX_PASSAGE`; a point longer than that is split at
its own sub-points.

A passage is named by its section and its first point ("Annex I Section I, point 2(e)"), so
`whole_section` and every citation still know the section it belongs to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Within the excerpt ceiling (1,200 characters), so a passage is shown whole with its title and
# headings. Measured on the decision sets at 400, 600, 800, 1,000 and 1,400: the same questions found
# in the first five at each, and the rank of the first right passage best at 400-600 (EAA MRR on
# the second set's tune half 0.736 / 0.721 against 0.650 at 1,400); 600 keeps a few points together.
MAX_PASSAGE = 600
POINT_SEPARATOR = ", point "
OPENING = "opening"
# The longest heading line a passage repeats from the point it sits under.
MAX_HEADING = 160

_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.(?:\s|$)")
_LETTERED = re.compile(r"^\(([a-z]{1,4})\)(?:\s|$)")
# Letters that are also roman numerals: "(i)" after "(h)" is a letter, after a letter's text a numeral.
_ROMAN_LETTERS = {"i": "h", "v": "u", "x": "w"}
_ROMAN = re.compile(r"^[ivx]+$")


@dataclass
class Point:
    label: str  # as cited within the section: "2", "2(e)", "(a)", "1(b)(vi)"
    kind: str  # number, letter or roman
    value: str
    depth: int
    lines: list[str]
    children: list["Point"] = field(default_factory=list)

    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines) + sum(c.size() for c in self.children)

    def all_lines(self) -> list[str]:
        return [*self.lines, *(line for c in self.children for line in c.all_lines())]


@dataclass(frozen=True)
class AnnexPassage:
    section: str
    title: str
    text: str
    # The points it holds, as labelled within the section ("opening", "(g)(i)", "(g)(ii)"); none when
    # the section is kept whole.
    points: tuple[str, ...] = ()


def split_section(section: str, title: str, body: str, max_passage: int = MAX_PASSAGE) -> list[AnnexPassage]:
    """The section as one passage if it fits, else as passages of its points, in order."""
    heading = f"{section}: {title}"
    lead, points = _parse(body.split("\n")) if len(body) > max_passage else ([], [])
    if not points:  # short enough, or nothing to split at
        return [AnnexPassage(section, heading, f"{heading}\n{body}")]
    if lead:
        # The section's opening words are a passage of their own, or lead the points packed with them;
        # repeated in every passage, they would make all of the section's passages alike to both legs.
        points.insert(0, Point(label=OPENING, kind="opening", value="", depth=0, lines=lead))
    groups = _pack(points, [], max_passage - len(heading))
    out: list[AnnexPassage] = []
    seen: set[str] = set()
    for context, group in groups:
        labels = [_unique(group[0].label, seen), *(p.label for p in group[1:])]
        name = f"{section}, {OPENING}" if labels[0] == OPENING else f"{section}{POINT_SEPARATOR}{labels[0]}"
        title = f"{heading}, {_span(labels)}"
        text = "\n".join([title, *context, *(line for p in group for line in p.all_lines())])
        out.append(AnnexPassage(name, title, text, tuple(labels)))
    return out


def _span(labels: list[str]) -> str:
    """"point 2(e)", "points 2(e) to 2(h)", "opening and point (a)", "opening and points (a) to (c)"."""
    opening = labels[0] == OPENING
    points = labels[1:] if opening else labels
    named = "" if not points else (f"point {points[0]}" if len(points) == 1 else f"points {points[0]} to {points[-1]}")
    return f"{OPENING} and {named}" if opening and named else (OPENING if opening else named)


def first_point_names(section: str) -> list[str]:
    """The names a split section's first passage can have: its opening, or the first point of each
    level down (points nest as number, letter, roman numeral), where the section starts with points
    that are headings only ("1. The provision of information", "(a)")."""
    firsts = ["1", "1(a)", "1(a)(i)", "(a)", "(a)(i)"]
    return [f"{section}, {OPENING}", *(f"{section}{POINT_SEPARATOR}{label}" for label in firsts)]


def _pack(points: list[Point], context: list[str], budget: int) -> list[tuple[list[str], list[Point]]]:
    """Consecutive points while they fit; a point too long alone is split at its sub-points, under
    its own heading line. A point whose own words are more than that line is first a passage (or
    part of one) by itself, so nothing of it is lost."""
    groups: list[tuple[list[str], list[Point]]] = []
    current: list[Point] = []
    room = budget - sum(len(c) + 1 for c in context)
    used = 0

    def flush() -> None:
        nonlocal current, used
        if current:
            groups.append((context, current))
        current, used = [], 0

    for point in points:
        size = point.size()
        if size > room and point.children:
            heading = _heading_line(point)
            if point.lines != [heading]:
                bare = Point(point.label, point.kind, point.value, point.depth, point.lines)
                if used + bare.size() > room:
                    flush()
                current.append(bare)
            flush()
            groups.extend(_pack(point.children, [*context, heading], budget))
            continue
        if used + size > room:
            flush()
        current.append(point)
        used += size
    flush()
    return groups


def _heading_line(point: Point) -> str:
    """A point's opening words as the heading of its sub-points' passages: its first line, cut at a
    word with " …" when long (Annex IV's point 2 is a 700-character paragraph before its list)."""
    line = point.lines[0]
    if len(line) <= MAX_HEADING:
        return line
    return line[: line.rfind(" ", 0, MAX_HEADING)].rstrip(",;:") + " …"


def _parse(lines: list[str]) -> tuple[list[str], list[Point]]:
    """Lines before the first point (the section's opening), and the points as a tree."""
    lead: list[str] = []
    roots: list[Point] = []
    stack: list[Point] = []
    for line in lines:
        marker = _marker(line, stack)
        if marker is None:
            (stack[-1].lines if stack else lead).append(line)
            continue
        kind, value = marker
        depth = _DEPTH[kind] + (value.count(".") if kind == "number" else 0)
        while stack and stack[-1].depth >= depth:
            stack.pop()
        parent = stack[-1] if stack else None
        own = value if kind == "number" else f"({value})"
        point = Point(label=f"{parent.label}{own}" if parent and kind != "number" else own,
                      kind=kind, value=value, depth=depth, lines=[line])
        (parent.children if parent else roots).append(point)
        stack.append(point)
    return lead, roots


# Points nest as number ("4", then "4.1"), letter, roman numeral.
_DEPTH = {"number": 0, "letter": 10, "roman": 20}


def _marker(line: str, stack: list[Point]) -> tuple[str, str] | None:
    m = _NUMBERED.match(line)
    if m:
        return "number", m.group(1)
    m = _LETTERED.match(line)
    if not m:
        return None  # running text, or a dash indent, which stays with the point above it
    value = m.group(1)
    if not _ROMAN.match(value):
        return "letter", value
    # "(i)" continues a letter sequence when the open letter point is "(h)"; else it is a numeral.
    open_letter = next((p for p in reversed(stack) if p.kind == "letter"), None)
    if open_letter is not None and _ROMAN_LETTERS.get(value) == open_letter.value and not open_letter.children:
        return "letter", value
    return "roman", value


def _unique(label: str, seen: set[str]) -> str:
    # Annex II repeats a point to give two indents of it their own examples.
    name, n = label, 2
    while name in seen:
        name, n = f"{label}, {n}", n + 1
    seen.add(name)
    return name


__all__ = ["MAX_PASSAGE", "POINT_SEPARATOR", "AnnexPassage", "first_point_names", "split_section"]
