// Drawing a transcript from frames: shared by the live chat and the shared-conversation page,
// so a shared answer looks exactly as it did when it streamed.
(function (global) {
  "use strict";

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  class Transcript {
    constructor(root) {
      this.root = root;
      this.answer = null;
      this.tools = new Map();
    }

    question(text) {
      const q = el("div", "msg user");
      q.appendChild(el("div", "who", "You"));
      q.appendChild(el("p", "body", text));
      this.root.appendChild(q);
      this.answer = null;
    }

    ensureAnswer() {
      if (!this.answer) {
        this.answer = el("div", "msg assistant");
        this.answer.appendChild(el("div", "who", document.body.dataset.bot || "groundchat"));
        this.answer.toolsBox = el("ul", "tools");
        this.answer.appendChild(this.answer.toolsBox);
        this.answer.textBox = el("div", "body");
        this.answer.appendChild(this.answer.textBox);
        this.answer.textBox.setAttribute("aria-live", "polite");
        this.root.appendChild(this.answer);
      }
      return this.answer;
    }

    frame(type, data) {
      const a = this.ensureAnswer();
      switch (type) {
        case "text":
          a.textBox.textContent += data.text;
          break;
        case "tool-call": {
          const li = el("li", "tool", "⚙ " + data.name + " " + JSON.stringify(data.args));
          this.tools.set(data.id, li);
          a.toolsBox.appendChild(li);
          break;
        }
        case "tool-result": {
          const li = this.tools.get(data.id);
          if (li) li.textContent += data.error ? "  → error: " + data.error : "  → ok";
          break;
        }
        case "citations":
          this.citations(a, data);
          break;
        case "limit":
          a.appendChild(el("p", "limit", data.message || "A spending limit was reached."));
          break;
        case "error":
          a.appendChild(el("p", "error", (data.message || "Error") + (data.run_id ? " (run " + data.run_id + ")" : "")));
          break;
        case "done":
          a.dataset.done = data.reason;
          if (data.reason !== "complete") a.appendChild(el("p", "done-note", "Answer ended: " + data.reason));
          this.answer = null;
          break;
      }
    }

    citations(a, data) {
      const sources = (data && data.sources) || [];
      const unverified = (data && data.unverified) || [];
      if (!sources.length && !unverified.length) return;
      const box = el("ol", "sources");
      for (const s of sources) {
        const li = el("li");
        const link = el("a", null, (s.title || s.section || s.ref) + " (" + s.source + " " + (s.section || "") + ")");
        link.href = s.url || "#";
        li.appendChild(link);
        li.appendChild(el("span", "ref", " [" + s.ref + "]"));
        box.appendChild(li);
      }
      a.appendChild(box);
      for (const item of unverified) {
        const ref = typeof item === "string" ? item : item.ref;
        a.appendChild(el("p", "unverified", "[" + ref + "] unverified: no tool returned this source in this answer"));
      }
    }

    // Stored messages (as /api/conversations/{id} and /api/shared/{id} return them) drawn as frames.
    stored(messages) {
      for (const m of messages) {
        if (m.role === "user") { this.question(m.content); continue; }
        if (m.role === "assistant") {
          if (m.content) this.frame("text", { text: m.content });
          for (const c of m.tool_calls || []) this.frame("tool-call", c);
          if (m.annotations && m.annotations.citations) this.frame("citations", m.annotations.citations);
        }
        if (m.role === "tool") this.frame("tool-result", { id: m.tool_call_id, name: m.name, error: m.is_error ? m.content : null });
      }
      this.answer = null;
    }
  }

  // Reads an SSE body from fetch() and calls onFrame(type, data) for each frame as it arrives.
  async function readFrames(response, onFrame) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const raw = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let type = "message", data = "";
        for (const line of raw.split("\n")) {
          if (line.startsWith("event: ")) type = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        onFrame(type, data ? JSON.parse(data) : {});
      }
    }
  }

  global.GroundchatTranscript = { Transcript, readFrames };
})(window);
