// The Replay tab: a saved web game, an uploaded record or a tournament's game, frame by
// frame, with what a learned agent thought of each legal move. The server answers a page
// of frames at a time (a long match is thousands of frames); the pages are fetched as the
// player moves through the game.

import { $, api, el, on, pageKey, show, whenShown } from "./common.js";
import { centre, seatBox, words } from "./cards.js";

let replay = null;  // {frames (filled a page at a time), total, at, page(offset)}

on("#tab-replay", "click", () => show("replay"));
whenShown("replay", () => loadSources());

async function loadSources() {
  const saved = await api("GET", "/api/replays");
  if (saved) {
    $("#saved-games").replaceChildren(...saved.map((g) =>
      el("option", { value: g.id }, `${g.saved} \u00B7 ${g.names.join(", ")} \u00B7 ${g.hands} hand(s)`)));
  }
  const runs = await api("GET", "/api/runs");
  if (runs) {
    $("#runs").replaceChildren(...runs.map((r) => el("option", { value: r }, r)));
    if (runs.length) await showRunTotal();
  }
}
async function showRunTotal() {
  const data = await api("GET", `/api/runs/games?run=${encodeURIComponent($("#runs").value)}&limit=1`);
  if (data) $("#run-total").textContent = `of 0..${data.total - 1}`;
}
on("#runs", "change", showRunTotal);
on("#open-saved", "click", async () => {
  if (!$("#saved-games").value) return;
  const id = encodeURIComponent($("#saved-games").value);
  await openReplay((offset) => api("GET", `/api/replays/${id}?offset=${offset}`));
});
on("#record-file", "change", async () => {
  const file = $("#record-file").files[0];
  if (!file) return;
  const text = await file.text();  // sent again for each page: the server keeps no upload
  await openReplay((offset) => api("POST", `/api/replay-file?offset=${offset}`, text));
});
on("#open-run", "click", async () => {
  const run = encodeURIComponent($("#runs").value);
  const game = Number($("#run-game").value);
  await openReplay((offset) => api("GET", `/api/runs/replay?run=${run}&game=${game}&offset=${offset}`));
});
async function openReplay(page) {
  const data = await page(0);
  if (!data) return;
  replay = { ...data, frames: new Array(data.total), at: 0, page };
  keepPage(replay, data);
  $("#player").classList.remove("hidden");
  let title = `${data.title} \u00B7 seed ${data.seed}`;
  if (data.matches_log === false) title += " (does not match the logged result)";
  $("#replay-title").textContent = title;
  $("#replay-jump").max = String(data.total - 1);
  drawFrame();
}
function keepPage(shown, data) {
  data.frames.forEach((frame, i) => { shown.frames[data.offset + i] = frame; });
}
// Fetch the page that holds frame i: one ending at it when going back, else one from it.
async function loadFrame(shown, i) {
  const starts = i < shown.at ? [Math.max(0, i - 99), i] : [i];
  for (const offset of starts) {
    if (shown.frames[i]) break;
    const data = await shown.page(offset);
    if (!data) return false;
    keepPage(shown, data);
  }
  return Boolean(shown.frames[i]);
}
function drawFrame() {
  const frame = replay.frames[replay.at];
  const all = $("#show-hands").checked;
  document.body.dataset.frame = String(replay.at);
  $("#replay-jump").value = String(replay.at);
  $("#replay-pos").textContent = `of ${replay.total - 1} \u00B7 hand ${frame.table.hand}, turn ${frame.table.turn}`;
  $("#replay-seats").replaceChildren(...frame.table.seats.map((s) => seatBox(all ? s : { ...s, cards: null }, { cards: true })));
  centre(frame.table, $("#replay-centre"));
  $("#replay-lines").replaceChildren(...frame.lines.map((line) => el("li", {}, words(line))));
  const box = $("#decision");
  box.replaceChildren();
  const d = frame.decision;
  if (!d) {
    const cut = frame.end === "cut";
    box.append(el("p", { class: cut ? "note" : "" }, cut
      ? `The record was cut short here, in the middle of hand ${frame.table.hand}: the hand was not played out.`
      : `End of the hand (hand ${frame.table.hand}).`));
    return;
  }
  box.append(el("p", {}, `Next move, by ${frame.table.seats[d.seat].name}: ${words(d.action)}`));
  const rows = d.moves.map((m) => {
    const p = d.probs ? d.probs[m.action] : null;
    const bar = el("span", { class: "bar" });
    bar.style.width = p === null || p === undefined ? "0" : `${Math.round(p * 200)}px`;
    return el("tr", { class: m.action === d.action ? "chosen" : "" }, el("td", {}, words(m.label)),
      el("td", { class: "prob" }, p === null || p === undefined ? "" : `${(100 * p).toFixed(1)}%`), el("td", {}, bar));
  });
  box.append(el("div", {}, d.probs ? "What the agent thought (probability of each legal move):" : "Legal moves:"),
    el("table", {}, ...rows));
  if (d.model) box.append(modelNote(d.model));
}
// What a language model wrote at this move, from its decision record. The model's text is
// untrusted: it is only ever put on the page as text (el appends strings as text nodes).
function modelNote(m) {
  const flags = [];
  if (m.endpoint_error) flags.push("endpoint failed");
  if (m.invalid) flags.push(`${m.invalid} invalid answer${m.invalid === 1 ? "" : "s"}`);
  if (m.retried) flags.push("retried");
  if (m.fallback) flags.push("fallback move");
  const read = m.fallback ? `played the fallback move ${m.action}` : `read as ${m.action}${m.form ? ` (${m.form})` : ""}`;
  const facts = `${read} \u00B7 ${m.latency_s.toFixed(2)} s \u00B7 ${m.tokens_in} tokens in, ${m.tokens_out} out`;
  const answers = m.responses.map((text, i) => el("div", { class: "model-answer" },
    el("div", { class: "about" }, m.responses.length > 1 ? `Answer ${i + 1}${i < m.errors.length ? ` (refused: ${m.errors[i]})` : ""}:` : "Answer:"),
    el("pre", { class: "model-text" }, text)));
  return el("div", { class: "model-note" },
    el("p", {}, el("strong", {}, `What the model ${m.model} wrote`), ` \u00B7 ${facts}`,
      flags.length ? el("span", { class: "model-flags" }, ` \u00B7 ${flags.join(", ")}`) : null),
    m.endpoint_error ? el("p", { class: "note" }, `No answer: ${m.endpoint_error}`) : null,
    ...answers,
    m.prompt ? el("details", {}, el("summary", {}, "The prompt"), el("pre", { class: "model-text" }, m.prompt)) : null);
}
async function goto(i) {
  if (!replay) return;
  const shown = replay;
  const at = Math.max(0, Math.min(shown.total - 1, i));
  if (!shown.frames[at] && !(await loadFrame(shown, at))) return;
  if (replay !== shown) return;  // another game was opened meanwhile
  shown.at = at;
  drawFrame();
}
$("#replay-first").addEventListener("click", () => goto(0));
$("#replay-prev").addEventListener("click", () => replay && goto(replay.at - 1));
$("#replay-next").addEventListener("click", () => replay && goto(replay.at + 1));
$("#replay-last").addEventListener("click", () => replay && goto(replay.total - 1));
$("#replay-jump").addEventListener("change", () => goto(Number($("#replay-jump").value)));
$("#show-hands").addEventListener("change", () => replay && drawFrame());
document.addEventListener("keydown", (event) => {
  if (!pageKey(event) || $("#replay").classList.contains("hidden") || !replay) return;
  const key = event.key;
  const step = { ArrowLeft: -1, ArrowRight: 1 }[key];
  if (step) { goto(replay.at + step); event.preventDefault(); }
  else if (key === "Home") { goto(0); event.preventDefault(); }
  else if (key === "End") { goto(replay.total - 1); event.preventDefault(); }
});
