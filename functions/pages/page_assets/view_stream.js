// A view drawn while its spec streams in. The model writes `show_view`'s input as JSON text in
// pieces (`tool-input-delta` frames); each piece is parsed as far as it goes and every part that
// is whole enough is drawn at once: the title, then each part, a table row by row and a chart bar
// by bar. Before it is drawn each passes the page's copy of the server's checks: the catalog
// (views/catalog.py) and the numbers check (grounding/view_numbers.py: every figure one a data tool
// returned in this answer, or that rounded, or a returned fraction as a percentage). What fails
// either is never drawn: a row or a bar alone, or the whole part when its own fields fail (its
// type, keys, caption, columns, title or unit), even as more of it arrives. The server's verdict decides the rest:
// an accepted view (the `view` frame) replaces the draft, a refused one (an error result) takes it
// away, and a draft whose call never ran is gone when the answer ends.
//
// transcript.js hands this every frame of an answer (GroundchatViewStream.frame); nothing here
// changes how a finished view is drawn: drafts are drawn with the transcript's own drawView.
(function (global) {
  "use strict";

  const VIEW_TOOL = "show_view";
  const DATA_TOOLS = new Set(["compare_contexts", "list_runs", "get_run", "top_rules"]);

  // ---- partial JSON: the value of a prefix of a JSON text --------------------------------------
  // Objects and arrays are kept open (listed in `open`) with what they hold so far; a string, a
  // number or a literal is kept only once it is whole (a number only once something follows it:
  // "7" may yet be "75"), so nothing drawn ever changes its value as more arrives.

  const INCOMPLETE = Symbol("incomplete");

  function partialJson(text) {
    const open = new WeakSet();
    let i = 0;
    const space = () => { while (i < text.length && " \t\r\n".includes(text[i])) i++; };

    function value() {
      space();
      if (i >= text.length) return INCOMPLETE;
      const c = text[i];
      if (c === "{") return object();
      if (c === "[") return array();
      if (c === "\"") return string();
      return scalar();
    }

    function object() {
      const out = {};
      open.add(out);
      i++;
      for (;;) {
        space();
        if (i >= text.length) return out;
        if (text[i] === "}") { i++; open.delete(out); return out; }
        if (text[i] === ",") { i++; continue; }
        const key = string();
        if (key === INCOMPLETE) return out;
        space();
        if (i >= text.length) return out;
        if (text[i] !== ":") throw new SyntaxError("expected ':'");
        i++;
        const v = value();
        if (v === INCOMPLETE) return out;
        out[key] = v;
      }
    }

    function array() {
      const out = [];
      open.add(out);
      i++;
      for (;;) {
        space();
        if (i >= text.length) return out;
        if (text[i] === "]") { i++; open.delete(out); return out; }
        if (text[i] === ",") { i++; continue; }
        const v = value();
        if (v === INCOMPLETE) return out;
        out.push(v);
      }
    }

    function string() {
      if (text[i] !== "\"") throw new SyntaxError("expected a string");
      let j = i + 1;
      while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1;
      if (j >= text.length) { i = text.length; return INCOMPLETE; }
      const s = JSON.parse(text.slice(i, j + 1));
      i = j + 1;
      return s;
    }

    function scalar() {
      const rest = text.slice(i);
      for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
        if (rest.startsWith(word)) { i += word.length; return v; }
        if (word.startsWith(rest)) { i = text.length; return INCOMPLETE; }
      }
      const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(rest);
      if (!m) throw new SyntaxError("unexpected " + rest.slice(0, 10));
      i += m[0].length;
      if (i >= text.length) return INCOMPLETE;  // the number may not be whole yet
      return Number(m[0]);
    }

    try {
      const v = value();
      return { value: v === INCOMPLETE ? undefined : v, open };
    } catch (e) {
      return { value: undefined, open, broken: true };
    }
  }

  // ---- exact decimals, for the numbers check ---------------------------------------------------
  // {m, e}: the value m × 10^-e, m a BigInt; from a number's shortest text, as the server's Decimal(repr()).

  function decimal(text) {
    const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(String(text).trim());
    if (!m) return null;
    const fraction = m[2] || "";
    let e = fraction.length - Number(m[3] || 0);
    let digits = BigInt(m[1] + fraction);
    if (e < 0) { digits *= 10n ** BigInt(-e); e = 0; }
    return { m: digits, e };
  }

  function times100(d) {
    return d.e >= 2 ? { m: d.m, e: d.e - 2 } : { m: d.m * 10n ** BigInt(2 - d.e), e: 0 };
  }

  // Whether `number` rounded to the places `shown` is written with (halves up, or to even) is `shown`.
  function roundsTo(number, shown) {
    const places = shown.e;
    const target = shown.m;
    if (number.e <= places) return number.m * 10n ** BigInt(places - number.e) === target;
    const d = 10n ** BigInt(number.e - places);
    const q = number.m / d, r = number.m % d;
    const up = 2n * r >= d ? q + 1n : q;
    const even = 2n * r > d || (2n * r === d && q % 2n === 1n) ? q + 1n : q;
    return up === target || even === target;
  }

  const WHOLE_NUMBER = /^\s*\$?(-?\d+(?:\.\d+)?)%?\s*$/;
  const NUMBER_IN_TEXT = /(?<![\w.\-/])\$?(\d+(?:,\d{3})*(?:\.\d+)?)(%?)(?![\w\-/]|\.\d)/g;
  const NOT_SHOWN = new Set(["type", "action", "name", "level", "format"]);

  // Every number in a data tool's result: numbers, and strings that are a number and nothing else.
  function returnedNumbers(result, pool) {
    if (typeof result === "number" && Number.isFinite(result)) {
      const d = decimal(String(Math.abs(result)));
      if (d) pool.push(d);
    } else if (typeof result === "string") {
      const m = WHOLE_NUMBER.exec(result);
      if (m) pool.push(decimal(m[1].replace("-", "")));
    } else if (Array.isArray(result)) {
      for (const v of result) returnedNumbers(v, pool);
    } else if (result && typeof result === "object") {
      for (const v of Object.values(result)) returnedNumbers(v, pool);
    }
  }

  // Every number `value` shows: [{shown: decimal, percent}].
  function shownNumbers(value, percent, out) {
    if (typeof value === "number") {
      out.push({ shown: decimal(String(Math.abs(value))), percent });
    } else if (typeof value === "string") {
      for (const m of value.matchAll(NUMBER_IN_TEXT)) out.push({ shown: decimal(m[1].replace(/,/g, "")), percent: percent || m[2] === "%" });
    } else if (Array.isArray(value)) {
      for (const v of value) shownNumbers(v, percent, out);
    } else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) if (!NOT_SHOWN.has(k)) shownNumbers(v, percent, out);
    }
    return out;
  }

  function grounded(value, percent, pool) {
    return shownNumbers(value, percent, []).every(({ shown, percent: asPercent }) =>
      shown && pool.some((n) => roundsTo(asPercent ? times100(n) : n, shown)));
  }

  // ---- the catalog, as views/catalog.py has it -------------------------------------------------

  const isText = (v, max) => typeof v === "string" && v.trim().length >= 1 && v.trim().length <= (max || 200);
  const isUnit = (v) => v === null || v === undefined || (typeof v === "string" && v.trim().length <= 20);
  const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
  const isValue = (v) => isNumber(v) || (typeof v === "string" && v.length <= 200);
  const onlyKeys = (o, keys) => Object.keys(o).every((k) => keys.includes(k));
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const isPercentUnit = (u) => typeof u === "string" && ["%", "percent"].includes(u.trim());
  const KEYS = {
    stats: ["type", "items"], table: ["type", "caption", "columns", "rows"], alert: ["type", "level", "text"],
    bar_chart: ["type", "title", "unit", "bars"], form: ["type", "action", "title", "submit_label", "fields"],
  };

  // A streaming list (stat items, rows, bars): its whole items that pass `ok`, at most `max` (an open
  // last item waits; an item that fails is never drawn, the others are), or FAIL when it is no list.
  const FAIL = Symbol("fail");
  function wholeItems(list, open, ok, max) {
    if (!Array.isArray(list) || (!open.has(list) && list.length === 0)) return FAIL;
    return list.slice(0, max).filter((item) => !open.has(item) && ok(item));
  }

  // What of `part` may be drawn now: a part to draw, null (not yet), or FAIL (never).
  function drawable(part, open, pool, actions) {
    if (!isObject(part)) return FAIL;
    const done = !open.has(part);
    if (part.type === undefined) return done ? FAIL : null;
    if (!KEYS[part.type] || !onlyKeys(part, KEYS[part.type])) return FAIL;
    const need = (keys) => keys.every((k) => part[k] !== undefined && !(typeof part[k] === "object" && part[k] !== null && open.has(part[k])));
    if (part.type === "stats") {
      if (part.items === undefined) return done ? FAIL : null;
      const items = wholeItems(part.items, open, (item) => isObject(item) && onlyKeys(item, ["label", "value", "unit", "format"]) &&
        isText(item.label) && isValue(item.value) && isUnit(item.unit) &&
        [undefined, null, "number", "percent", "usd"].includes(item.format) &&
        grounded(item.label, false, pool) &&
        grounded(item.value, isPercentUnit(item.unit) || item.format === "percent", pool), 12);
      if (items === FAIL) return FAIL;
      return items.length ? { type: "stats", items } : null;
    }
    if (part.type === "table") {
      if (!need(["caption", "columns"])) return done ? FAIL : null;
      const columns = part.columns;
      if (!isText(part.caption) || !grounded(part.caption, false, pool) || !Array.isArray(columns) || columns.length < 1 ||
          columns.length > 8 || !columns.every((c) => isText(c) && grounded(c, false, pool))) return FAIL;
      if (part.rows === undefined) return done ? FAIL : null;
      const rows = wholeItems(part.rows, open, (row) => Array.isArray(row) && row.length === columns.length &&
        row.every((cell, c) => (cell === null || isValue(cell)) && grounded(cell, columns[c].includes("%"), pool)), 50);
      if (rows === FAIL) return FAIL;
      return rows.length ? { type: "table", caption: part.caption, columns, rows } : null;
    }
    if (part.type === "bar_chart") {
      if (!need(["title", "unit"])) return done ? FAIL : null;
      if (!isText(part.title) || typeof part.unit !== "string" || !isUnit(part.unit) ||
          !grounded(part.title, false, pool) || !grounded(part.unit, false, pool)) return FAIL;
      if (part.bars === undefined) return done ? FAIL : null;
      const bars = wholeItems(part.bars, open, (bar) => isObject(bar) && onlyKeys(bar, ["label", "value"]) && isText(bar.label) &&
        isNumber(bar.value) && bar.value >= 0 && grounded(bar.label, false, pool) && grounded(bar.value, isPercentUnit(part.unit), pool), 30);
      if (bars === FAIL) return FAIL;
      return bars.length ? { type: "bar_chart", title: part.title, unit: part.unit, bars } : null;
    }
    // An alert and a form are drawn whole or not at all: a form half there could be submitted.
    if (!done) return null;
    if (part.type === "alert") {
      return ["info", "warning", "error"].includes(part.level) && isText(part.text, 500) && grounded(part.text, false, pool) ? part : FAIL;
    }
    const action = actions[part.action];
    const fields = Array.isArray(part.fields) ? part.fields : [];
    const fine = action && fields.length >= 1 && fields.length <= 6 && (part.title === undefined || part.title === null || isText(part.title)) &&
      (part.submit_label === undefined || part.submit_label === null || isText(part.submit_label)) &&
      fields.every((f) => isObject(f) && f.name in action.params && isText(f.label) && Array.isArray(f.options || f.values)) &&
      grounded(part, false, pool);
    return fine ? part : FAIL;
  }

  // ---- one draft per show_view call ------------------------------------------------------------

  class Draft {
    constructor(answer) {
      this.answer = answer;
      this.text = "";
      this.failed = new Set();  // parts that failed a check: never drawn, whatever follows
      this.drawn = "";
      this.section = null;
    }

    grow(piece, pool) {
      this.text += piece;
      this.redraw(pool);
    }

    redraw(pool) {
      const T = global.GroundchatTranscript;
      const { value, open, broken } = partialJson(this.text);
      if (broken || !isObject(value)) return;
      const title = isText(value.title) && grounded(value.title, false, pool) ? value.title : null;
      if (typeof value.title === "string" && title === null) { this.remove(); this.failed.add("title"); return; }
      if (this.failed.has("title") || title === null) return;
      const parts = [];
      const list = Array.isArray(value.parts) ? value.parts.slice(0, 8) : [];
      list.forEach((part, n) => {
        if (this.failed.has(n)) return;
        // At most one form, and only as the last part.
        const misplacedForm = isObject(part) && part.type === "form" && (n < list.length - 1 || parts.some((p) => p.type === "form"));
        const shown = misplacedForm ? FAIL : drawable(part, open, pool, T.VIEW_ACTIONS);
        if (shown === FAIL) this.failed.add(n);
        else if (shown) parts.push(shown);
      });
      const view = { title, parts };
      const key = JSON.stringify(view);
      if (key === this.drawn) return;
      this.drawn = key;
      const section = T.drawView(view);
      section.classList.add("view-draft");
      section.setAttribute("aria-busy", "true");
      section.appendChild(T.el("p", "hint view-draft-note", "Drawing the view as it arrives; it stays only if the checks accept it."));
      if (this.section) this.section.replaceWith(section);
      else this.answer.viewsBox.appendChild(section);
      this.section = section;
    }

    remove() {
      if (this.section) this.section.remove();
      this.section = null;
      this.drawn = "";
    }
  }

  // The transcript's hook: every frame of answer `a`, before the transcript draws it.
  function frame(a, type, data) {
    a.viewDrafts = a.viewDrafts || new Map();
    a.returnedNumbers = a.returnedNumbers || [];
    const drafts = a.viewDrafts;
    if (type === "tool-input-delta" && data.name === VIEW_TOOL) {
      if (!drafts.has(data.id)) drafts.set(data.id, new Draft(a));
      drafts.get(data.id).grow(String(data.delta || ""), a.returnedNumbers);
    } else if (type === "tool-result") {
      if (DATA_TOOLS.has(data.name) && data.error === undefined) returnedNumbers(data.result, a.returnedNumbers);
      const draft = drafts.get(data.id);
      if (draft && data.error !== undefined) {  // refused: what was drawn of it goes
        draft.remove();
        drafts.delete(data.id);
      }
    } else if (type === "view" || type === "done") {
      // The accepted view is drawn by the transcript where its draft was; on `done`, a draft whose
      // call never ran (its step failed or was stopped) goes too.
      for (const draft of drafts.values()) draft.remove();
      drafts.clear();
    }
  }

  global.GroundchatViewStream = { frame, partialJson, decimal, roundsTo };
})(window);
