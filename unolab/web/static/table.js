// The uno-lab table: plain JavaScript talking to the JSON API (docs/web.md).
"use strict";

const $ = (sel) => document.querySelector(sel);
const COLOUR_WORDS = { R: "red", Y: "yellow", G: "green", B: "blue" };
const CSS_COLOURS = { R: "var(--red)", Y: "var(--yellow)", G: "var(--green)", B: "var(--blue)" };
let options = null;
let game = null;       // the current game's view
let replay = null;     // {frames, at}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

async function api(method, path, body) {
  document.body.dataset.busy = "1";
  $("#error").textContent = "";
  try {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    const response = await fetch(path, init);
    // Every answer of the server is JSON; a proxy in between may still answer otherwise,
    // so the text is read first and an answer that is not JSON is shown by its status.
    const text = await response.text();
    let data = null;
    try { data = JSON.parse(text); } catch (_) { data = null; }
    if (!response.ok) {
      const detail = data && typeof data.detail === "string" ? data.detail : "";
      throw new Error(detail || `${response.status} ${response.statusText || "error"}`.trim());
    }
    if (data === null) throw new Error(`the server's answer to ${path} is not JSON`);
    if (data.save_error) $("#error").textContent = data.save_error;
    return data;
  } catch (err) {
    $("#error").textContent = err.message;
    throw err;
  } finally {
    document.body.dataset.busy = "0";
  }
}

// ---- cards ---------------------------------------------------------------------------

function cardColour(name) { return name.startsWith("W") ? "W" : name[0]; }
function cardValue(name) {
  if (name === "W") return "W";
  if (name === "W+4") return "+4";
  const rank = name.slice(1);
  return { S: "\u2298", R: "\u21C4" }[rank] || rank;
}
function cardTitle(name) {
  if (name === "W") return "Wild";
  if (name === "W+4") return "Wild Draw Four";
  const rank = { S: "Skip", R: "Reverse", "+2": "Draw Two" }[name.slice(1)] || name.slice(1);
  return `${COLOUR_WORDS[name[0]]} ${rank}`;
}
function card(name, tag = "div", small = false) {
  const node = el(tag, { class: `card ${cardColour(name)}${small ? " small" : ""}`, title: cardTitle(name) },
    cardValue(name));
  node.dataset.card = name;
  return node;
}
function swatch(letter) {
  const node = el("span", { class: "swatch" });
  node.style.background = letter ? CSS_COLOURS[letter] : "#888";
  return node;
}

// ---- tabs ----------------------------------------------------------------------------

function show(view) {
  for (const id of ["setup", "table-view", "replay"]) $("#" + id).classList.toggle("hidden", id !== view);
  $("#tab-play").classList.toggle("active", view !== "replay");
  $("#tab-replay").classList.toggle("active", view === "replay");
  if (view === "replay") loadSources();
}
$("#tab-play").addEventListener("click", () => show(game && !game.match_over ? "table-view" : "setup"));
$("#tab-replay").addEventListener("click", () => show("replay"));

// ---- setup ---------------------------------------------------------------------------

function chosenRules() {
  const rules = { ...options.presets[$("#preset").value] };
  rules.num_players = Number($("#num-players").value);
  for (const [name, value] of Object.entries(switchValues())) rules[name] = value;
  return rules;
}
function fits(agent, rules) {
  if (!agent.rules) return true;
  return Object.keys(agent.rules).every((k) => k === "seat_draw_streams" ||
    JSON.stringify(agent.rules[k]) === JSON.stringify(rules[k]));
}
function switchValues() {
  const preset = options.presets[$("#preset").value];
  const out = {};
  for (const input of document.querySelectorAll("#switches [data-switch]")) {
    const name = input.dataset.switch;
    let value = input.type === "checkbox" ? input.checked : input.value;
    if (input.type === "number") value = Number(value);
    if (input.tagName === "SELECT" && value === "None") value = null;
    if (JSON.stringify(value) !== JSON.stringify(preset[name])) out[name] = value;
  }
  return out;
}
function renderSwitches() {
  const preset = options.presets[$("#preset").value];
  const box = $("#switches");
  box.replaceChildren();
  for (const sw of options.switches) {
    const value = preset[sw.name];
    let input;
    if (sw.allowed === "True or False") {
      input = el("input", { type: "checkbox" });
      input.checked = value;
    } else if (sw.allowed.includes(" or ")) {
      const choices = sw.allowed.replace(", ", " or ").split(/, | or /);
      input = el("select", {}, ...choices.map((c) => el("option", { value: c }, c)));
      input.value = value === null ? "None" : value === true ? "True" : value === false ? "False" : value;
      if (sw.allowed.startsWith("True")) input.addEventListener("change", () => {});
    } else {
      input = el("input", { type: "number", value: String(value) });
    }
    input.dataset.switch = sw.name;
    input.addEventListener("change", renderOpponents);
    box.append(el("label", { title: sw.about }, input, " " + sw.name));
  }
}
function renderOpponents() {
  const box = $("#opponents");
  const before = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren(el("legend", {}, "Opponents"));
  const rules = chosenRules();
  const agents = options.agents.filter((a) => fits(a, rules));
  for (let seat = 1; seat < rules.num_players; seat++) {
    const select = el("select", { "data-seat": String(seat) },
      ...agents.map((a) => el("option", { value: a.id }, a.kind === "bot" || a.kind === "search" ? a.label : `${a.label} (${a.kind})`)));
    select.value = agents.some((a) => a.id === before[seat - 1]) ? before[seat - 1] : "mixbot";
    box.append(el("label", {}, `player_${seat} `, select));
  }
}
async function setup() {
  options = await api("GET", "/api/options");
  for (const name of Object.keys(options.presets)) $("#preset").append(el("option", { value: name }, name));
  $("#preset").addEventListener("change", () => { renderSwitches(); renderOpponents(); });
  $("#num-players").addEventListener("change", renderOpponents);
  renderSwitches();
  renderOpponents();
}
$("#setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const switches = switchValues();
  for (const [k, v] of Object.entries(switches)) if (v === "True" || v === "False") switches[k] = v === "True";
  const body = {
    preset: $("#preset").value,
    num_players: Number($("#num-players").value),
    opponents: [...document.querySelectorAll("#opponents select")].map((s) => s.value),
    switches,
  };
  if ($("#seed").value !== "") body.seed = Number($("#seed").value);
  game = await api("POST", "/api/games", body);
  $("#log").replaceChildren();
  addLog(game.log);
  show("table-view");
  drawGame();
});

// ---- the table -----------------------------------------------------------------------

function sentence(line) { return line.replace(/^you /, "You "); }
function addLog(lines) {
  for (const line of lines) $("#log").append(el("li", {}, sentence(line)));
  $("#log").scrollTop = $("#log").scrollHeight;
}
function seatBox(seat, cardsSmall) {
  const box = el("div", { class: "seat" + (seat.current ? " current" : ""), "data-seat": String(seat.seat) },
    el("div", { class: "who" }, seat.name),
    el("div", {}, `${seat.count} card${seat.count === 1 ? "" : "s"} \u00B7 ${seat.score} points`));
  if (seat.out) box.append(el("span", { class: "badge" }, "out"));
  if (seat.catchable) box.append(el("span", { class: "badge" }, "no UNO called!"));
  if (cardsSmall && seat.cards) box.append(el("div", { class: "cards" }, ...seat.cards.map((c) => card(c, "div", true))));
  return box;
}
function centre(table, box) {
  const dir = table.direction > 0 ? "\u21BB clockwise" : "\u21BA counter-clockwise";
  box.replaceChildren(
    el("div", { class: "pile", title: "draw pile" }, String(table.draw_pile)),
    card(table.top),
    el("div", { id: box.id === "centre" ? "colour-now" : "" }, swatch(table.colour), " ",
      table.colour ? COLOUR_WORDS[table.colour] : "colour not named"),
    el("div", {}, dir));
}
function moveButton(move) {
  return el("button", { "data-action": move.action, onclick: () => play(move.action) }, move.label);
}
function drawGame() {
  const t = game.table;
  document.body.dataset.seq = String(game.seq);
  $("#table-info").textContent = `Hand ${t.hand}, move ${game.seq} \u00B7 first to ${t.target_score} points \u00B7 seed ${game.seed}`;
  $("#seats").replaceChildren(...t.seats.map((s) => seatBox(s.seat === 0 ? { ...s, cards: null } : s, game.hand_over)));
  centre(t, $("#centre"));
  $("#situation").textContent = game.situation;
  const mine = t.seats[0];
  const plays = game.moves.filter((m) => m.kind === "play");
  $("#hand").replaceChildren(...(mine.cards || []).map((name) => {
    const node = card(name, "button");
    const options = plays.filter((m) => m.card === name);
    if (options.length) {
      node.classList.add("playable");
      node.addEventListener("click", () => choose(options));
    } else node.disabled = true;
    return node;
  }));
  $("#moves").replaceChildren(...game.moves.filter((m) => m.kind !== "play").map(moveButton));
  $("#colour-picker").classList.add("hidden");
  $("#next-hand").classList.toggle("hidden", !game.hand_over || game.match_over);
  const reveal = $("#reveal");
  reveal.classList.toggle("hidden", !game.hand_over);
  if (game.hand_over) {
    reveal.replaceChildren(el("h3", {}, game.match_over ? "Match over" : "Hand over"),
      ...t.seats.map((s) => el("div", { class: "revealed" },
        `${s.name}: ${game.reveal.hand_points[s.seat]} points this hand, ${game.reveal.scores[s.seat]} in all `,
        el("div", { class: "cards" }, ...(s.cards || []).map((c) => card(c, "div", true))))));
  }
}
function choose(moves) {
  if (moves.length === 1) return play(moves[0].action);
  const picker = $("#colour-picker");
  picker.replaceChildren("Name a colour: ", ...moves.map((m) => {
    const b = el("button", { "data-action": m.action, "data-colour": m.colour, onclick: () => play(m.action) },
      COLOUR_WORDS[m.colour] || m.label);
    b.style.background = CSS_COLOURS[m.colour];
    return b;
  }));
  picker.classList.remove("hidden");
}
async function play(action) {
  game = await api("POST", `/api/games/${game.id}/moves`, { action, seq: game.seq });
  addLog(game.log);
  drawGame();
}
$("#next-hand").addEventListener("click", async () => {
  game = await api("POST", `/api/games/${game.id}/next-hand`, { seq: game.seq });
  addLog(game.log);
  drawGame();
});
$("#new-game").addEventListener("click", () => { game = null; show("setup"); });

// ---- replay --------------------------------------------------------------------------

async function loadSources() {
  const saved = await api("GET", "/api/replays");
  $("#saved-games").replaceChildren(...saved.map((g) =>
    el("option", { value: g.id }, `${g.saved} \u00B7 ${g.names.join(", ")} \u00B7 ${g.hands} hand(s)`)));
  const runs = await api("GET", "/api/runs");
  $("#runs").replaceChildren(...runs.map((r) => el("option", { value: r }, r)));
  if (runs.length) showRunTotal();
}
async function showRunTotal() {
  const data = await api("GET", `/api/runs/games?run=${encodeURIComponent($("#runs").value)}&limit=1`);
  $("#run-total").textContent = `of 0..${data.total - 1}`;
}
$("#runs").addEventListener("change", showRunTotal);
$("#open-saved").addEventListener("click", async () => {
  if ($("#saved-games").value) openReplay(await api("GET", `/api/replays/${$("#saved-games").value}`));
});
$("#record-file").addEventListener("change", async () => {
  const file = $("#record-file").files[0];
  if (file) openReplay(await api("POST", "/api/replay-file", await file.text()));
});
$("#open-run").addEventListener("click", async () => {
  const run = encodeURIComponent($("#runs").value);
  openReplay(await api("GET", `/api/runs/replay?run=${run}&game=${Number($("#run-game").value)}`));
});
function openReplay(data) {
  replay = { ...data, at: 0 };
  $("#player").classList.remove("hidden");
  let title = `${data.title} \u00B7 seed ${data.seed}`;
  if (data.matches_log === false) title += " (does not match the logged result)";
  $("#replay-title").textContent = title;
  $("#replay-jump").max = String(data.frames.length - 1);
  drawFrame();
}
function drawFrame() {
  const frame = replay.frames[replay.at];
  const all = $("#show-hands").checked;
  document.body.dataset.frame = String(replay.at);
  $("#replay-jump").value = String(replay.at);
  $("#replay-pos").textContent = `of ${replay.frames.length - 1} \u00B7 hand ${frame.table.hand}, turn ${frame.table.turn}`;
  $("#replay-seats").replaceChildren(...frame.table.seats.map((s) => seatBox(all ? s : { ...s, cards: null }, true)));
  centre(frame.table, $("#replay-centre"));
  $("#replay-lines").replaceChildren(...frame.lines.map((line) => el("li", {}, sentence(line))));
  const box = $("#decision");
  box.replaceChildren();
  const d = frame.decision;
  if (!d) { box.append(el("p", {}, "End of the hand.")); return; }
  box.append(el("p", {}, `Next move, by ${frame.table.seats[d.seat].name}: ${d.action}`));
  const rows = d.moves.map((m) => {
    const p = d.probs ? d.probs[m.action] : null;
    const bar = el("span", { class: "bar" });
    bar.style.width = p === null ? "0" : `${Math.round(p * 200)}px`;
    return el("tr", { class: m.action === d.action ? "chosen" : "" }, el("td", {}, m.label),
      el("td", { class: "prob" }, p === null ? "" : `${(100 * p).toFixed(1)}%`), el("td", {}, bar));
  });
  box.append(el("div", {}, d.probs ? "What the agent thought (probability of each legal move):" : "Legal moves:"),
    el("table", {}, ...rows));
}
function goto(i) {
  if (!replay) return;
  replay.at = Math.max(0, Math.min(replay.frames.length - 1, i));
  drawFrame();
}
$("#replay-first").addEventListener("click", () => goto(0));
$("#replay-prev").addEventListener("click", () => goto(replay.at - 1));
$("#replay-next").addEventListener("click", () => goto(replay.at + 1));
$("#replay-last").addEventListener("click", () => goto(replay.frames.length - 1));
$("#replay-jump").addEventListener("change", () => goto(Number($("#replay-jump").value)));
$("#show-hands").addEventListener("change", () => replay && drawFrame());

setup();
