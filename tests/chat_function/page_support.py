"""Helpers the page tests share: runs in the store, axe-core, page widths and the keyboard's focus."""
from __future__ import annotations

import json

SLICE_TASKS = ("signup-form", "nav-header")  # 120 of the sample's 480 runs: six pages of 20


def sample_slice(tasks: tuple[str, ...] = SLICE_TASKS) -> list[dict]:
    from groundchat_cli.sample import generate_runs

    return [x for x in generate_runs() if x["task"] in tasks]


def import_runs(dynamo, lines: list[dict]) -> list[dict]:
    """The runs stored as an import stores them (with their views); returns the lines."""
    from groundchat.store.runs_import import import_text
    from groundchat.store.runs import RunWriter

    from tests.moto_snapshot import runs_imported

    def store():
        report = import_text(RunWriter(dynamo), "".join(json.dumps(x) + "\n" for x in lines))
        assert report.ok and len(report.imported) == len(lines)

    runs_imported(lines, store)
    return lines


def newest_first(lines: list[dict], **flt: str) -> list[str]:
    """The brute force: every matching run id, newest first (ties by id, as the store orders them)."""
    def broke(line, rule):
        return any(v["id"] == rule for v in ((line.get("axe") or {}).get("violations") or []))

    chosen = [x for x in lines if all((broke(x, v) if k == "rule" else x[k] == v) for k, v in flt.items())]
    stamp = lambda x: x["started_at"].replace("+00:00", "Z")  # noqa: E731
    return [x["id"] for x in sorted(chosen, key=lambda x: (stamp(x), x["id"]), reverse=True)]


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def inject_axe(page, axe: str) -> None:
    """axe-core into the page as the browser's tools run a script: not a <script> of the page, which
    the pages' Content-Security-Policy refuses as inline (and would report as a violation)."""
    page.evaluate(axe + "\n;undefined")


def axe_violations(page, axe: str) -> list:
    inject_axe(page, axe)
    result = page.evaluate("async () => await axe.run()")
    return [(v["id"], [n["target"] for n in v["nodes"]]) for v in result["violations"]]


# What the focused element shows: its outline (or box shadow), the colour behind it, and whether it
# is the topmost thing at its centre (focus not hidden under something else, WCAG 2.4.11).
FOCUS_STATE = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  e.scrollIntoView({block: "center", inline: "nearest"});
  const s = getComputedStyle(e);
  const r = e.getBoundingClientRect();
  const x = Math.min(Math.max(r.left + Math.min(r.width, 40) / 2, 0), innerWidth - 1);
  const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
  const top = document.elementFromPoint(x, y);
  let bg = "rgba(0, 0, 0, 0)";
  for (let n = e.parentElement; n; n = n.parentElement) {
    const c = getComputedStyle(n).backgroundColor;
    if (c !== "rgba(0, 0, 0, 0)" && c !== "transparent") { bg = c; break; }
  }
  if (bg === "rgba(0, 0, 0, 0)") bg = "rgb(255, 255, 255)";
  return {tag: e.tagName.toLowerCase(), id: e.id, text: (e.innerText || e.value || "").slice(0, 60),
          outlineStyle: s.outlineStyle, outlineWidth: parseFloat(s.outlineWidth), outlineColor: s.outlineColor,
          outlineOffset: parseFloat(s.outlineOffset), background: bg,
          onTop: Boolean(top && (top === e || e.contains(top) || top.contains(e))),
          focusVisible: e.matches(":focus-visible")};
}"""


def _rgb(text: str) -> tuple[float, ...]:
    inside = text[text.index("(") + 1: text.index(")")].replace("/", ",")
    return tuple(float(p) for p in inside.replace(" ", ",").split(",") if p)[:3]


def contrast(a: str, b: str) -> float:
    def luminance(rgb):
        def channel(c):
            c /= 255
            return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        r, g, bl = (channel(c) for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * bl

    la, lb = sorted((luminance(_rgb(a)), luminance(_rgb(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def assert_focus_visible(page) -> dict:
    """The focused element shows a solid outline at least 2 px wide whose colour has 3:1 against
    what is behind it, and nothing covers it."""
    state = page.evaluate(FOCUS_STATE)
    assert state is not None, "nothing is focused"
    where = f"{state['tag']}#{state['id']} {state['text']!r}"
    assert state["focusVisible"], f"{where} is focused but not :focus-visible"
    assert state["outlineStyle"] == "solid" and state["outlineWidth"] >= 2, f"{where}: outline {state}"
    assert contrast(state["outlineColor"], state["background"]) >= 3, f"{where}: outline contrast {state}"
    assert state["onTop"], f"{where} is hidden under something else"
    return state


def tab_to(page, selector: str, limit: int = 120, shift: bool = False) -> list[dict]:
    """Tab (or Shift+Tab) until the focused element matches `selector`, checking the focus shows at
    every stop on the way; returns the stops."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if shift else "Tab")
        stops.append(assert_focus_visible(page))
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return stops
    raise AssertionError(f"{selector} was not reached in {limit} tabs; the last stops: {stops[-5:]}")
