// The shared.html page's own script: a file, not inline, so the Content-Security-Policy allows no inline script.
(function () {
  const data = JSON.parse(document.getElementById("conversation-data").textContent);
  const { Transcript, url } = window.GroundchatTranscript;
  const id = data.conversation.conversation_id;
  // A shared conversation's images are public with it: their address is enough.
  const imageSource = (image) => url("/api/shared/" + encodeURIComponent(id) + "/images/" + image.sha256);
  const answers = new Transcript(document.getElementById("transcript"), { imageSource }).stored(data.messages);
  offerRatings(id, answers);
})();

// A signed-in reader may rate the answers (counted apart from the owner's ratings); signed out,
// the page stays read-only.
async function offerRatings(id, answers) {
  const { Auth, url, feedbackControls } = window.GroundchatTranscript;
  await Auth.ready();
  if (!Auth.token()) return;
  const headers = Auth.headers({ "content-type": "application/json" });
  const [status, mine] = await Promise.all([
    fetch(url("/api/chat/status")).then((r) => r.json()).catch(() => ({})),
    fetch(url("/api/conversations/" + id + "/feedback"), { headers }).then((r) => (r.ok ? r.json() : null)).catch(() => null),
  ]);
  if (!mine) return;  // this account may not rate it (the route says 404): nothing to offer
  for (const [a, , seq] of answers) {
    const send = async (body) => {
      const r = await fetch(url("/api/conversations/" + id + "/messages/" + seq + "/feedback"),
                            { method: "POST", headers, body: JSON.stringify(body) }).catch(() => null);
      if (!r) return "the server could not be reached";
      const answer = await r.json().catch(() => ({}));
      return r.ok ? answer.feedback : ((answer.error && answer.error.message) || "HTTP " + r.status);
    };
    a.appendChild(feedbackControls({ reasons: status.feedback_reasons || [], current: mine.feedback[String(seq)] || null, send }));
  }
}
