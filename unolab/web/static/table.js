// The uno-lab table: plain JavaScript talking to the JSON API (docs/web.md).
"use strict";

const $ = (sel) => document.querySelector(sel);
const $$ = (sel) => [...document.querySelectorAll(sel)];
const COLOUR_WORDS = { R: "red", Y: "yellow", G: "green", B: "blue" };
const CSS_COLOURS = { R: "var(--red)", Y: "var(--yellow)", G: "var(--green)", B: "var(--blue)" };
const PRESET_WORDS = {
  official: "The official rules.",
  street: "Street rules: stacking Draw Twos and Wild Draw Fours that add up, draw until a card plays, jump-in.",
  seven_zero: "The official rules with seven-zero: a 7 swaps hands, a 0 passes every hand on.",
  rlcard: "The RLCard benchmark's rules (two players, no UNO call, Wild Draw Four as a last resort).",
};
let options = null;
let game = null;       // the current game's view
let replay = null;     // {frames, at}
let stepping = false;  // the bots' moves are being shown one by one

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- talking to the server ---------------------------------------------------------

function showError(message) {
  $("#error").textContent = message || "";
  $("#error-box").classList.toggle("hidden", !message);
}
$("#error-close").addEventListener("click", () => showError(""));

// Seeds may exceed what a JavaScript number holds exactly (2**53): any "seed" the server
// sends as a bare number is read as its digits before JSON.parse can round it.
function parseJson(text) {
  return JSON.parse(text.replace(/("seed"\s*:\s*)(-?\d+)(?=\s*[,}\]])/g, '$1"$2"'));
}

// Every call answers the data, or null after showing why in the header: a refusal (a 4xx
// with one line) is a message for the player, never an uncaught error in the console.
async function api(method, path, body) {
  document.body.dataset.busy = "1";
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
    try { data = parseJson(text); } catch (_) { data = null; }
    if (!response.ok) {
      const detail = data && typeof data.detail === "string" ? data.detail : "";
      showError(detail || `${response.status} ${response.statusText || "error"}`.trim());
      return null;
    }
    if (data === null) { showError(`the server's answer to ${path} is not JSON`); return null; }
    showError(data.save_error || "");
    return data;
  } catch (err) {
    showError(`the server cannot be reached (${err.message})`);
    return null;
  } finally {
    document.body.dataset.busy = stepping ? "1" : "0";
  }
}
// Event handlers are async; a failure is shown, never left as an unhandled rejection.
function safely(handler) {
  return (...args) => Promise.resolve().then(() => handler(...args)).catch((err) => showError(String(err && err.message || err)));
}
function on(sel, event, handler) { $(sel).addEventListener(event, safely(handler)); }
function segments(id) { return String(id).split("/").map(encodeURIComponent).join("/"); }

// ---- cards and words -----------------------------------------------------------------

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
  const colour = cardColour(name);
  const letter = colour === "W" ? "W" : colour;
  const node = el(tag, { class: `card ${colour}${small ? " small" : ""}`, title: cardTitle(name),
    "aria-label": cardTitle(name), type: tag === "button" ? "button" : null },
  el("span", { class: "index", "aria-hidden": "true" }, letter),
  el("span", { class: "value", "aria-hidden": "true" }, cardValue(name)),
  el("span", { class: "index low", "aria-hidden": "true" }, letter));
  node.dataset.card = name;
  return node;
}
function swatch(letter) {
  const node = el("span", { class: "swatch" });
  node.style.background = letter ? CSS_COLOURS[letter] : "#888";
  return node;
}
// The narrator writes cards by their codes (B7, W+4); the page says them in words.
function words(line) {
  return line
    .replace(/\bW\+4\b/g, "Wild Draw Four")
    .replace(/\b([RYGB])\+2\b/g, (_, c) => `${COLOUR_WORDS[c]} Draw Two`)
    .replace(/\b([RYGB])([0-9SR])\b/g, (m) => cardTitle(m))
    .replace(/\bW\b(?!:)/g, "Wild")
    .replace(/'(draw|pass|keep|uno|challenge|accept|catch)'/g, (_, a) => `\u201C${a}\u201D`)
    .replace(/^you /, "You ");
}
function seatName(seat) { return game.table.seats[seat].name; }
function moveWords(move) {
  const t = game.table;
  switch (move.kind) {
    case "draw": return t.pending > 0 ? `Take the ${t.pending} cards` : "Draw a card";
    case "keep": return "Keep the drawn card";
    case "pass": return "Pass";
    case "uno": return "UNO!";
    case "challenge": return "Challenge the Wild Draw Four";
    case "accept": return "Accept: draw 4";
    case "catch": {
      const caught = t.seats.find((s) => s.catchable);
      return caught ? `Catch ${caught.name}: no UNO called` : "Catch a missing UNO";
    }
    case "swap": {
      const m = /\(with (.*)\)$/.exec(move.label);
      return `Swap hands with ${m ? m[1] : move.action}`;
    }
    case "colour": return `Name ${COLOUR_WORDS[move.colour] || move.label}`;
    default: return words(move.label);
  }
}
const MOVE_KEYS = { draw: "D", uno: "U", pass: "P", keep: "K", challenge: "C", accept: "A", catch: "C" };

// ---- tabs ----------------------------------------------------------------------------

function show(view) {
  for (const id of ["setup", "table-view", "replay", "lab"]) $("#" + id).classList.toggle("hidden", id !== view);
  $("#tab-play").classList.toggle("active", view === "setup" || view === "table-view");
  $("#tab-replay").classList.toggle("active", view === "replay");
  $("#tab-lab").classList.toggle("active", view === "lab");
  showError("");
  if (view === "replay") loadSources();
  if (view === "lab") loadLab();
}
on("#tab-play", "click", () => show(game ? "table-view" : "setup"));
on("#tab-replay", "click", () => show("replay"));
on("#tab-lab", "click", () => show("lab"));

// ---- setup: the rules in words -------------------------------------------------------

// Each group of house rules, each rule named in words; a choice maps its values to words.
const RULE_GROUPS = [
  { title: "Stacking", about: "Answer a draw penalty with another card instead of drawing.", rules: [
    ["stack_draw_two", "Draw Two on a Draw Two"],
    ["stack_draw_four", "Wild Draw Four on a Wild Draw Four"],
    ["stack_draw_two_on_four", "Draw Two (of the named colour) on a Wild Draw Four"],
    ["stack_draw_four_on_two", "Wild Draw Four on a Draw Two"],
    ["stack_cumulative", "Stacked penalties add up", null, "otherwise the first penalty passes on"],
    ["reverse_deflects", "A Reverse sends a penalty back"]] },
  { title: "Jump-in", rules: [["jump_in", "Jump in out of turn with the identical card"]] },
  { title: "Seven-zero", rules: [["seven_zero", "A 7 swaps hands with a player you choose; a 0 passes every hand on"]] },
  { title: "Drawing", rules: [
    ["draw_rule", "A draw takes", { one: "one card (official)", until_playable: "cards until one plays" }],
    ["draw_cap", "Most cards one draw takes"],
    ["voluntary_draw", "You may draw even when a card plays"],
    ["after_draw", "A playable drawn card", { choose: "may be played or kept (official)", rlcard: "is played at once (RLCard)" }]] },
  { title: "Wild Draw Four", rules: [["wd4", "A Wild Draw Four"]] },
  { title: "Calling UNO", rules: [
    ["uno_call", "You must call UNO at two cards; a missed call can be caught"],
    ["uno_penalty", "Cards drawn when caught"]] },
  { title: "Wilds", rules: [["colours_in_circle", "A wild names the next colour in the circle red, yellow, green, blue"]] },
  { title: "The table", rules: [
    ["two_player_rules", "Two-player rules (a Reverse acts as a Skip)", { None: "with exactly two players (official)", True: "always", False: "never" }],
    ["teams", "Two teams of partners sitting opposite (4 players)"],
    ["play_to_last", "Play on until one player is left"]] },
  { title: "Scoring", rules: [
    ["scoring", "Points", { winner_takes: "the winner scores the cards left (official)", penalty_points: "each scores their own cards; the lowest total wins" }],
    ["zero_scores_fifty", "A lone 0 left in a hand counts 50"]] },
  { title: "The first card", rules: [
    ["starter_redraw_wilds", "Any wild turned up first is put back, not only a Wild Draw Four"],
    ["starter_draw_two_skips", "A Draw Two turned up first skips the first player"],
    ["starter_wild_colour", "A Wild turned up first", { choose: "the first player names its colour", random: "gets a colour at random" }]] },
  { title: "Advanced", rules: [
    ["hand_size", "Cards dealt to each player"],
    ["max_turns", "Moves after which a hand is cut short"],
    ["reshuffle_top", "A reshuffle takes the top discard too (RLCard)"]] },
];
const WD4_MODES = {
  challenge: ["may be challenged if played with a card of the colour in hand (official)", { wd4_challenge: true, wd4_anytime: false, wd4_last_resort: false }],
  strict: ["only when you hold no card of the colour (no bluffing)", { wd4_challenge: false, wd4_anytime: false, wd4_last_resort: false }],
  anytime: ["any time, never challenged", { wd4_challenge: false, wd4_anytime: true, wd4_last_resort: false }],
  last_resort: ["only when nothing else plays (RLCard)", { wd4_challenge: false, wd4_anytime: false, wd4_last_resort: true }],
};
const RULE_NAMES = { target_score: "target score", num_players: "players", wd4_challenge: "Wild Draw Four challenge",
  wd4_anytime: "Wild Draw Four any time", wd4_last_resort: "Wild Draw Four as a last resort" };
for (const group of RULE_GROUPS) for (const [name, title] of group.rules) RULE_NAMES[name] = RULE_NAMES[name] || title;

function preset() { return options.presets[$("#preset").value]; }
function switchSpec(name) { return options.switches.find((s) => s.name === name); }
function wd4Mode(rules) {
  for (const [mode, [, fields]] of Object.entries(WD4_MODES)) {
    if (Object.entries(fields).every(([k, v]) => rules[k] === v)) return mode;
  }
  return "challenge";
}
function ruleInput(name, choices) {
  if (name === "wd4") {
    return el("select", { "data-rule": "wd4" }, ...Object.entries(WD4_MODES).map(([mode, [text]]) => el("option", { value: mode }, text)));
  }
  const spec = switchSpec(name);
  if (!spec) return null;
  if (spec.allowed === "True or False") return el("input", { type: "checkbox", "data-rule": name });
  if (spec.allowed.includes(" or ")) {
    const values = spec.allowed.replace(", ", " or ").split(/, | or /);
    return el("select", { "data-rule": name }, ...values.map((v) => el("option", { value: v }, (choices && choices[v]) || v)));
  }
  return el("input", { type: "number", min: name === "uno_penalty" ? "0" : "1", "data-rule": name });
}
function renderSwitches() {
  const box = $("#switches");
  box.replaceChildren();
  const placed = new Set(["target_score", "wd4_challenge", "wd4_anytime", "wd4_last_resort"]);
  const groups = RULE_GROUPS.map((g) => ({ ...g, rules: [...g.rules] }));
  for (const group of groups) for (const [name] of group.rules) placed.add(name);
  // A rule the page does not know yet still shows, under its own name.
  const others = options.switches.filter((s) => !placed.has(s.name)).map((s) => [s.name, s.name]);
  if (others.length) groups.push({ title: "Other", rules: others });
  for (const group of groups) {
    const set = el("fieldset", { class: "rule-group" }, el("legend", {}, group.title));
    if (group.about) set.append(el("p", { class: "about" }, group.about));
    for (const [name, title, choices, extra] of group.rules) {
      const input = ruleInput(name, choices);
      if (!input) continue;
      const spec = switchSpec(name);
      const about = name === "wd4" ? "" : extra || (spec && plainAbout(spec.about)) || "";
      const label = input.type === "checkbox"
        ? el("label", { class: "rule", "data-for": name }, input, " " + title, el("span", { class: "about" }, about), el("span", { class: "about why" }))
        : el("label", { class: "rule", "data-for": name }, title + " ", input, el("span", { class: "about" }, about), el("span", { class: "about why" }));
      set.append(label);
    }
    box.append(set);
  }
  for (const input of $$("#switches [data-rule]")) input.addEventListener("change", () => { constrain(input); renderOpponents(); });
  loadPreset();
}
function plainAbout(text) {
  return text.replace(/``"?([^`"]+)"?``/g, "$1").replace(/\s+/g, " ");
}
// The form starts from the chosen preset's values.
function loadPreset() {
  const rules = preset();
  for (const input of $$("#switches [data-rule]")) {
    const name = input.dataset.rule;
    if (name === "wd4") { input.value = wd4Mode(rules); continue; }
    const value = rules[name];
    if (input.type === "checkbox") input.checked = Boolean(value);
    else if (input.tagName === "SELECT") input.value = value === null ? "None" : value === true ? "True" : value === false ? "False" : String(value);
    else input.value = String(value);
  }
  $("#target-score").value = String(rules.target_score);
  constrain(null);
}
function ruleControl(name) { return $(`#switches [data-rule="${name}"]`); }
function setWhy(name, why) {
  const label = $(`#switches [data-for="${name}"]`);
  if (!label) return;
  label.classList.toggle("off", Boolean(why));
  label.querySelector(".why").textContent = why ? ` (${why})` : "";
}
function disable(name, why, reset) {
  const input = ruleControl(name);
  if (!input) return;
  input.disabled = Boolean(why);
  if (why && reset) reset(input);
  setWhy(name, why);
}
// Rules that contradict each other cannot be chosen together: the form switches off what
// the other choices rule out and says why, so that Deal is never refused for it.
function constrain() {
  const players = Number($("#num-players").value) || 2;
  const checked = (name) => { const i = ruleControl(name); return Boolean(i && i.checked); };
  const uncheck = (input) => { input.checked = false; };
  const stacking = ["stack_draw_two", "stack_draw_four", "stack_draw_two_on_four", "stack_draw_four_on_two"].some(checked);
  disable("stack_cumulative", stacking ? "" : "needs a stacking rule", uncheck);
  disable("teams", players !== 4 ? "needs exactly 4 players" : checked("play_to_last") ? "not with playing on to the last player" : "", uncheck);
  disable("play_to_last", checked("teams") ? "not with teams: a team's hand ends when a partner goes out" : "", uncheck);
  const tpr = ruleControl("two_player_rules");
  if (tpr) {
    const always = tpr.querySelector('option[value="True"]');
    if (always) always.disabled = players !== 2;
    if (players !== 2 && tpr.value === "True") tpr.value = "None";
    setWhy("two_player_rules", players !== 2 ? "\u201Calways\u201D needs exactly 2 players" : "");
  }
  const drawRule = ruleControl("draw_rule"), afterDraw = ruleControl("after_draw");
  if (drawRule && afterDraw) {
    const untilOption = drawRule.querySelector('option[value="until_playable"]');
    const rlcardOption = afterDraw.querySelector('option[value="rlcard"]');
    if (untilOption) untilOption.disabled = afterDraw.value === "rlcard";
    if (rlcardOption) rlcardOption.disabled = drawRule.value === "until_playable";
    setWhy("after_draw", drawRule.value === "until_playable" ? "\u201Cplayed at once\u201D needs one-card draws" : "");
    setWhy("draw_rule", afterDraw.value === "rlcard" ? "\u201Cuntil one plays\u201D does not fit drawn cards played at once" : "");
    disable("draw_cap", drawRule.value === "until_playable" ? "" : "only for draws until a card plays");
  }
  disable("uno_penalty", checked("uno_call") ? "" : "only when calling UNO is on");
  const hand = ruleControl("hand_size");
  if (hand) hand.max = String(Math.floor(99 / players));
  $("#rules-changed").textContent = Object.keys(switchValues()).filter((k) => k !== "target_score").length
    ? `(${Object.keys(switchValues()).filter((k) => k !== "target_score").length} changed from ${$("#preset").value})` : "";
}
function chosenRules() {
  const rules = { ...preset() };
  rules.num_players = Number($("#num-players").value);
  Object.assign(rules, switchValues());
  return rules;
}
// The switches that differ from the preset (what the API's `switches` takes).
function switchValues() {
  const base = preset();
  const out = {};
  const consider = (name, value) => { if (JSON.stringify(value) !== JSON.stringify(base[name])) out[name] = value; };
  for (const input of $$("#switches [data-rule]")) {
    const name = input.dataset.rule;
    if (name === "wd4") {
      for (const [k, v] of Object.entries(WD4_MODES[input.value][1])) consider(k, v);
      continue;
    }
    let value = input.type === "checkbox" ? input.checked : input.value;
    if (input.type === "number") value = Number(value);
    const literal = { None: null, True: true, False: false };
    if (input.tagName === "SELECT" && value in literal) value = literal[value];
    consider(name, value);
  }
  consider("target_score", Number($("#target-score").value));
  return out;
}
function fits(agent, rules) { return misfits(agent, rules).length === 0; }
function misfits(agent, rules) {
  if (!agent.rules) return [];
  return Object.keys(agent.rules).filter((k) => k !== "seat_draw_streams" &&
    JSON.stringify(agent.rules[k]) !== JSON.stringify(rules[k]));
}
function agentLabel(agent) {
  const kind = agent.kind === "bot" ? "" : agent.kind === "search" ? " (search)" : ` (${agent.kind === "shipped" ? "trained" : "your folder"})`;
  return agent.label + kind;
}
// The agent the player chose for each seat: kept while the rules rule it out, so that it
// comes back when they fit it again.
const wantedAgents = {};
function renderOpponents() {
  const box = $("#opponent-list");
  box.replaceChildren();
  const rules = chosenRules();
  const agents = options.agents.filter((a) => fits(a, rules));
  const replaced = [];
  for (let seat = 1; seat < rules.num_players; seat++) {
    const select = el("select", { "data-seat": String(seat) },
      ...agents.map((a) => el("option", { value: a.id, title: a.about || "" }, agentLabel(a))));
    const wanted = wantedAgents[seat];
    if (wanted && !agents.some((a) => a.id === wanted)) replaced.push([seat, wanted]);
    select.value = agents.some((a) => a.id === wanted) ? wanted : "mixbot";
    const about = el("span", { class: "about" });
    const describe = () => {
      const a = options.agents.find((x) => x.id === select.value);
      about.textContent = a ? [a.about, a.strength ? `strength: ${a.strength}` : ""].filter(Boolean).join(" \u00B7 ") : "";
    };
    select.addEventListener("change", () => { wantedAgents[seat] = select.value; describe(); });
    describe();
    box.append(el("label", { class: "opponent" }, `player_${seat} `, select, about));
  }
  renderNote(rules, replaced);
}
// Say which trained agents are left out, and why, rather than drop them silently.
function renderNote(rules, replaced) {
  const notes = [];
  for (const [seat, id] of replaced) {
    const a = options.agents.find((x) => x.id === id);
    notes.push(`player_${seat}: ${a ? a.label : id} does not play these rules, so mixbot sits there instead (it comes back when the rules fit it).`);
  }
  const learned = options.agents.filter((a) => a.rules);
  const out = learned.filter((a) => !fits(a, rules));
  if (out.length) {
    const why = out.map((a) => {
      const fields = misfits(a, rules).map((k) => RULE_NAMES[k] || k);
      return `${a.label} (trained for ${a.rules.num_players} players, ${describeRules(a.rules)}; differs in: ${fields.join(", ")})`;
    });
    notes.push(`Trained agents play only the rules they learned: not offered here are ${why.join("; ")}. The bots and searches play any rules.`);
  } else if (learned.length) {
    notes.push("The bots and searches play any rules; trained agents only the rules they learned (changing a house rule or the table size removes them).");
  }
  $("#agent-note").textContent = notes.join(" ");
}
// Rules in words, by what differs from the official preset.
function describeRules(rules) {
  if (typeof rules === "string") return `${rules} rules`;
  if (!rules || typeof rules !== "object") return "unknown rules";
  const official = options ? options.presets.official : null;
  if (!official) return "custom rules";
  const changed = Object.keys(official).filter((k) => !["num_players", "seat_draw_streams"].includes(k) &&
    k in rules && JSON.stringify(rules[k]) !== JSON.stringify(official[k]));
  for (const [name, p] of Object.entries(options.presets)) {
    if (Object.keys(p).every((k) => ["num_players", "seat_draw_streams"].includes(k) || !(k in rules) || JSON.stringify(p[k]) === JSON.stringify(rules[k]))) {
      return `${name} rules`;
    }
  }
  return `official rules but ${changed.map((k) => RULE_NAMES[k] || k).join(", ")}`;
}
async function setup() {
  options = await api("GET", "/api/options");
  if (!options) return;
  for (const name of Object.keys(options.presets)) $("#preset").append(el("option", { value: name }, name));
  $("#preset").addEventListener("change", () => { $("#preset-about").textContent = PRESET_WORDS[$("#preset").value] || ""; loadPreset(); renderOpponents(); });
  $("#num-players").addEventListener("change", () => { constrain(); renderOpponents(); });
  $("#target-score").addEventListener("change", () => constrain());
  $("#preset-about").textContent = PRESET_WORDS[$("#preset").value] || "";
  renderSwitches();
  renderOpponents();
}
on("#setup-form", "submit", async (event) => {
  event.preventDefault();
  if (!canDeal()) {  // sent the moment it can be (watchWarmup)
    dealWhenReady = true;
    renderDeal();
    showWarmup();
    return;
  }
  await deal();
});
async function deal() {
  const body = {
    preset: $("#preset").value,
    num_players: Number($("#num-players").value),
    opponents: $$("#opponent-list select").map((s) => s.value),
    switches: switchValues(),
  };
  const seed = $("#seed").value.trim();
  if (seed !== "") body.seed = seed;  // as digits: a number may not hold it exactly
  const view = await api("POST", "/api/games", body);
  if (!view) return;
  $("#setup-note").classList.add("hidden");
  attach(view, true, { ...view, last_cards: view.last_cards.map(() => null) });
  await showEvents(view);
}

// ---- the engine's first compile ------------------------------------------------------

// On the first start of an install the server compiles the game engine (minutes) while the
// page is already in use: a banner says how far it is, and a Deal clicked meanwhile waits
// here and is sent the moment the game can be dealt (the server would refuse it before).
// Every game but one against a search can be dealt once the engine is "playable"; the
// searches compile last.
let warmup = null;  // the server's last word on it (GET /api/warmup)
let dealWhenReady = false;
const WARMUP_POLL_MS = 1000;
function choosesSearch() {
  const kinds = new Map((options ? options.agents : []).map((a) => [a.id, a.kind]));
  return $$("#opponent-list select").some((s) => kinds.get(s.value) === "search");
}
function canDeal() {
  if (!warmup) return false;
  if (warmup.ready || warmup.error) return true;  // after a failure, what compiled still plays
  return warmup.playable && !choosesSearch();
}
function renderDeal() {
  const waiting = dealWhenReady && !canDeal();
  const button = $("#start");
  button.disabled = waiting;
  button.classList.toggle("waiting", waiting);
  button.textContent = waiting ? "Dealing when the engine is ready\u2026" : "Deal";
}
function warmupWords(w) {
  const total = w.total || "?";
  const step = w.total ? Math.min(w.done + 1, w.total) : 1;
  const elapsed = Math.round(w.elapsed_s);
  const time = elapsed <= w.estimate_s ? `${elapsed} s of about ${w.estimate_s} s`
    : `${elapsed} s (it usually takes about ${w.estimate_s} s)`;
  const where = `${time} \u2014 step ${step} of ${total}${w.current ? `: ${w.current}` : ""}`;
  if (w.playable) {
    const then = dealWhenReady ? "Your game is dealt as soon as they are ready." : "A game against them is dealt as soon as they are ready.";
    return `The game engine is ready to play. The searches (pimc, ismcts) are still compiling (first start of this install, done once): ${where}. ${then}`;
  }
  const then = dealWhenReady ? "Your game is dealt as soon as it is ready."
    : "Choose your game meanwhile: Deal deals it as soon as the engine is ready.";
  return `Preparing the game engine (first start of this install, done once): ${where}. ${then}`;
}
function showWarmup() {
  const w = warmup;
  if (!w) return;
  const failed = Boolean(w.error);
  $("#warmup").classList.toggle("hidden", Boolean(w.ready));
  $("#warmup").classList.toggle("failed", failed);
  $("#warmup-text").textContent = failed
    ? `The game engine could not be compiled (${w.error}); games that need it may fail, and the server's terminal says more.`
    : warmupWords(w);
}
async function dealIfWaiting() {
  if (!dealWhenReady || !canDeal()) return;
  dealWhenReady = false;
  renderDeal();
  if (!$("#setup").classList.contains("hidden")) await deal();  // not if you went elsewhere
}
async function watchWarmup() {
  for (;;) {
    let w = null;
    try {
      const response = await fetch("/api/warmup");
      if (response.ok) w = await response.json();
    } catch (_) {
      w = null;  // the server is away: /api/options says so in the header; ask again later
    }
    if (w) {
      warmup = w;
      showWarmup();
      renderDeal();
      await dealIfWaiting();
      if (w.ready || w.error) return;
    }
    await sleep(w ? WARMUP_POLL_MS : 5 * WARMUP_POLL_MS);
  }
}

// ---- the table -----------------------------------------------------------------------

function stepDelay() { return Number($("#speed").value); }
$("#speed").value = localStorage.getItem("uno-speed") || "450";
$("#speed").addEventListener("change", () => localStorage.setItem("uno-speed", $("#speed").value));

// Take up a game: its id goes in the address, so that a reload comes back to it. ``base``
// is what to draw first (a new deal before the bots' first moves are shown).
function attach(view, fresh, base) {
  game = base || view;
  if (location.hash !== `#game=${view.id}`) history.replaceState(null, "", `#game=${view.id}`);
  if (fresh) $("#log").replaceChildren();
  addLog(view.log);
  show("table-view");
  drawGame();
}
function addLog(lines) {
  for (const line of lines) $("#log").append(el("li", {}, words(line)));
  $("#log").scrollTop = $("#log").scrollHeight;
}
function seatBox(seat, how) {
  const { cards, last, winner, acting } = how;
  const classes = ["seat", seat.current && !acting ? "current" : "", acting ? "acting" : "", winner ? "winner" : ""];
  const label = seat.agent ? el("span", { class: "agent" }, ` (${seat.agent})`) : null;
  const name = seat.agent ? seat.name.replace(` (${seat.agent})`, "") : seat.name;
  const box = el("div", { class: classes.filter(Boolean).join(" "), "data-seat": String(seat.seat) },
    el("div", { class: "who" }, name, label),
    el("div", { class: "stats" }, el("span", { class: "count" }, `${seat.count} card${seat.count === 1 ? "" : "s"}`), ` \u00B7 ${seat.score} pts`));
  if (winner) box.append(el("span", { class: "badge win" }, "\u2605 won"));
  if (seat.current && !winner) box.append(el("span", { class: "badge turn" }, "to play"));
  if (seat.out) box.append(el("span", { class: "badge" }, "out"));
  if (seat.count === 1 && !seat.catchable && !seat.out) box.append(el("span", { class: "badge" }, "UNO"));
  if (seat.catchable) box.append(el("span", { class: "badge" }, "no UNO called!"));
  if (last !== undefined) {
    box.append(el("div", { class: "last" }, last ? card(last, "div", true) : null, el("span", { class: "label" }, last ? "last played" : "nothing played yet")));
  }
  if (cards && seat.cards) box.append(el("div", { class: "cards" }, ...seat.cards.map((c) => card(c, "div", true))));
  return box;
}
function centre(table, box) {
  const dir = table.direction > 0 ? "\u21BB clockwise" : "\u21BA counter-clockwise";
  box.replaceChildren(
    el("div", { class: "pile", title: "draw pile" }, String(table.draw_pile)),
    card(table.top),
    el("div", {}, swatch(table.colour), " ", table.colour ? COLOUR_WORDS[table.colour] : "colour not named"),
    el("div", {}, dir));
}
function drawCentre(top, colour, direction, pile, arrived) {
  const topCard = card(top);
  if (arrived) topCard.classList.add("arrived");
  topCard.id = "top";
  $("#top-box").replaceChildren(topCard);
  $("#colour-now").replaceChildren(swatch(colour), " ", colour ? COLOUR_WORDS[colour] : "colour not named");
  $("#direction").textContent = direction > 0 ? "\u21BB clockwise" : "\u21BA counter-clockwise";
  if (pile !== null) $("#pile-count").textContent = String(pile);
}
function winnerSeats() {
  if (!game.hand_over || !game.reveal) return new Set();
  if (game.match_over && game.reveal.match_winners) return new Set(game.reveal.match_winners);
  return new Set(game.reveal.winner === null ? [] : [game.reveal.winner]);
}
function drawSeats(actingSeat) {
  const winners = winnerSeats();
  $("#seats").replaceChildren(...game.table.seats.map((s) => seatBox(s, {
    cards: false, last: game.last_cards ? game.last_cards[s.seat] : undefined,
    winner: winners.has(s.seat), acting: s.seat === actingSeat })));
}
function drawGame() {
  const t = game.table;
  document.body.dataset.seq = String(game.seq);
  document.body.dataset.game = game.id;
  $("#table-line").textContent = `Hand ${t.hand}, move ${game.seq} \u00B7 first to ${t.target_score} points \u00B7 seed ${game.seed}`;
  drawSeats(null);
  drawCentre(t.top, t.colour, t.direction, t.draw_pile, false);
  $("#ticker").textContent = "";
  const moves = game.moves;
  const draw = moves.find((m) => m.kind === "draw");
  $("#pile").disabled = !draw;
  $("#pile").title = draw ? `${moveWords(draw)} (D)` : "draw pile";
  drawSituation();
  const mine = t.seats[0];
  const plays = moves.filter((m) => m.kind === "play");
  const playable = [];
  $("#hand").classList.toggle("hidden", game.hand_over);
  $("#hand").replaceChildren(...(game.hand_over ? [] : mine.cards || []).map((name) => {
    const node = card(name, "button");
    const choices = plays.filter((m) => m.card === name);
    if (choices.length && !playable.some((p) => p[0].card === name)) {
      playable.push(choices);
      node.classList.add("playable");
      node.title = `${cardTitle(name)}: play it (${playable.length <= 9 ? playable.length : "click"})`;
      node.addEventListener("click", safely(() => choose(choices)));
    } else if (choices.length) {
      node.classList.add("playable");
      node.addEventListener("click", safely(() => choose(choices)));
    } else {
      node.classList.add("locked");
      node.disabled = true;
      node.title = `${cardTitle(name)}: cannot be played now`;
    }
    if (t.drawn === name) node.classList.add("drawn");
    return node;
  }));
  game.playable = playable;
  $("#moves").replaceChildren(...moves.filter((m) => m.kind !== "play").map(moveButton));
  $("#colour-picker").classList.add("hidden");
  $("#next-hand").classList.toggle("hidden", !game.hand_over || game.match_over);
  drawResult();
}
function drawSituation() {
  const line = $("#situation");
  const uno = game.moves.some((m) => m.kind === "uno");
  line.classList.toggle("your-turn", game.your_turn);
  line.classList.toggle("uno-now", uno);
  if (uno) {
    line.textContent = "Two cards left: press UNO! (U) before you play your card, or you can be caught " +
      `and draw ${penaltyCards()}.`;
  } else if (game.your_turn) {
    line.textContent = words(game.situation);
  } else if (game.hand_over) {
    line.textContent = "";
  } else {
    line.textContent = "The others are playing\u2026";
  }
}
function penaltyCards() {
  const base = options && options.presets[game.setup.preset];
  const switched = game.setup.switches || {};
  return switched.uno_penalty ?? (base ? base.uno_penalty : 2);
}
function moveButton(move) {
  const key = MOVE_KEYS[move.kind];
  const button = el("button", { type: "button", "data-action": move.action, "data-kind": move.kind,
    class: move.kind === "uno" ? "uno" : null, title: move.label, onclick: safely(() => play(move.action)) },
  moveWords(move), key ? " " : null, key ? el("kbd", {}, key) : null);
  return button;
}
function choose(moves) {
  if (moves.length === 1) return play(moves[0].action);
  const picker = $("#colour-picker");
  picker.replaceChildren("Name a colour: ", ...moves.map((m) => {
    const b = el("button", { type: "button", "data-action": m.action, "data-colour": m.colour, onclick: safely(() => play(m.action)) },
      COLOUR_WORDS[m.colour] || m.label, " ", el("kbd", {}, m.colour));
    b.style.background = CSS_COLOURS[m.colour];
    return b;
  }));
  picker.classList.remove("hidden");
  return null;
}
async function play(action) {
  if (stepping || !game) return;
  const view = await api("POST", `/api/games/${game.id}/moves`, { action, seq: game.seq });
  if (!view) return reload();
  await advance(view);
}
// A refused move (a stale page, say) leaves the game as it was: take up the server's view.
async function reload() {
  if (!game) return;
  const view = await api("GET", `/api/games/${game.id}`);
  if (view) {
    const message = $("#error").textContent;
    attach(view, true);
    showError(message);
  }
}
async function advance(view) {
  addLog(view.log);
  await showEvents(view);
}
// Show the steps of an answer one by one (the bots' moves between two of yours): the seat
// that acts lights up, its card lands on the pile, the counts change, the words appear.
async function showEvents(view) {
  const events = (view.events || []).filter((e) => e.seat !== 0);
  const delay = stepDelay();
  const before = game;
  if (events.length && delay > 0 && before) {
    stepping = true;
    document.body.dataset.busy = "1";
    try {
      // While the bots move, your hand is the one after your move, none of it playable.
      const seats = before.table.seats.map((s) => ({ ...s, current: false }));
      seats[0] = { ...seats[0], cards: view.table.seats[0].cards };
      game = { ...before, moves: [], your_turn: false, hand_over: false, match_over: false, reveal: null,
        table: { ...before.table, seats }, last_cards: [...(before.last_cards || [])] };
      drawGame();
      for (const e of events) {
        if (e.hand !== game.table.hand) {
          game.table.hand = e.hand;
          game.last_cards = game.last_cards.map(() => null);
        }
        game.table.seats.forEach((s) => { s.count = e.counts[s.seat]; });
        if (e.card) game.last_cards[e.seat] = e.card;
        drawSeats(e.seat);
        drawCentre(e.top, e.colour, e.direction, null, Boolean(e.card));
        $("#ticker").textContent = e.lines.map(words).join(" ");
        await sleep(delay);
      }
    } finally {
      stepping = false;
    }
  }
  game = view;
  drawGame();
  if (events.length) $("#ticker").textContent = events[events.length - 1].lines.map(words).join(" ");
  document.body.dataset.busy = "0";
}
// The end of a hand: who won, the points, the score against the target, every hand.
function drawResult() {
  const box = $("#result");
  box.classList.toggle("hidden", !game.hand_over);
  if (!game.hand_over) { box.replaceChildren(); return; }
  const r = game.reveal, seats = game.table.seats;
  const subject = (seat) => (seat === 0 ? "You" : seats[seat].name);
  const verb = (seat, third, first) => (seat === 0 ? first : third);
  let headline;
  if (r.winner === null) headline = "The hand was cut short: no winner, no points";
  else if (r.scoring === "penalty_points") {
    headline = `${subject(r.winner)} ${verb(r.winner, "goes", "go")} out; the others take their cards' points`;
  } else {
    headline = `${subject(r.winner)} ${verb(r.winner, "wins", "win")} the hand, +${r.hand_points[r.winner]}`;
  }
  const order = seats.map((s) => s.seat).sort((a, b) => (r.scoring === "penalty_points" ? r.scores[a] - r.scores[b] : r.scores[b] - r.scores[a]));
  const scoreList = order.map((s) => `${s === 0 ? "you" : seats[s].name} ${r.scores[s]}`).join(" \u00B7 ");
  const goal = r.scoring === "penalty_points" ? `the match ends at ${r.target_score}; lowest total wins` : `first to ${r.target_score} wins`;
  const parts = [];
  if (game.match_over) {
    const winners = r.match_winners || [];
    const scoreline = order.map((s) => r.scores[s]).join("-");
    const who = winners.length === 1 ? `${subject(winners[0])} ${verb(winners[0], "wins", "win")}` : `${winners.map(subject).join(" and ")} share`;
    parts.push(el("h3", {}, `${who} the match ${scoreline}`), el("p", { class: "score-line" }, `${headline}. Final score: ${scoreList} (${goal}).`));
  } else {
    parts.push(el("h3", {}, headline), el("p", { class: "score-line" }, `Score: ${scoreList} (${goal}).`));
  }
  const rows = seats.map((s) => el("tr", { class: s.seat === r.winner ? "winner revealed" : "revealed", "data-seat": String(s.seat) },
    el("td", {}, s.seat === r.winner ? "\u2605 " : "", s.seat === 0 ? "you" : s.name),
    el("td", {}, s.cards && s.cards.length ? el("div", { class: "cards" }, ...s.cards.map((c) => card(c, "div", true))) : "no cards"),
    el("td", {}, `cards worth ${r.held_points[s.seat]}`),
    el("td", {}, `${r.hand_points[s.seat] > 0 ? "+" : ""}${r.hand_points[s.seat]} this hand`),
    el("td", {}, `${r.scores[s.seat]} in all`)));
  parts.push(el("table", {}, el("tbody", {}, ...rows)));
  box.replaceChildren(...parts);
}
on("#pile", "click", () => {
  const draw = game && game.moves.find((m) => m.kind === "draw");
  if (draw) return play(draw.action);
  return null;
});
on("#next-hand", "click", async () => {
  if (stepping) return;
  const view = await api("POST", `/api/games/${game.id}/next-hand`, { seq: game.seq });
  if (view) await advance(view);
});
function confirmAbandon() {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = `Abandon this match (hand ${game.table.hand}, score ${game.table.seats.map((s) => s.score).join("-")})? ` +
    "Hands already finished are saved under Replay; the hand in play is lost.";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}
on("#new-game", "click", async () => {
  if (game && !game.match_over && !(await confirmAbandon())) return;
  game = null;
  history.replaceState(null, "", location.pathname + location.search);
  show("setup");
});
// The address names the game being played: a reload (or the link) takes it up again.
async function resume() {
  const m = /^#game=([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  if (!m) return false;
  const view = await api("GET", `/api/games/${m[1]}`);
  if (!view) {
    history.replaceState(null, "", location.pathname + location.search);
    showError("");
    const note = $("#setup-note");
    note.textContent = "That game is no longer held by the server (it restarted, or the game sat idle too long); finished hands are under Replay.";
    note.classList.remove("hidden");
    return false;
  }
  attach(view, true);
  return true;
}

// ---- keys ----------------------------------------------------------------------------

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
  if ($("#confirm").open) return;
  const key = event.key;
  if (!$("#replay").classList.contains("hidden") && replay) {
    const step = { ArrowLeft: -1, ArrowRight: 1 }[key];
    if (step) { goto(replay.at + step); event.preventDefault(); }
    else if (key === "Home") { goto(0); event.preventDefault(); }
    else if (key === "End") { goto(replay.frames.length - 1); event.preventDefault(); }
    return;
  }
  if ($("#table-view").classList.contains("hidden") || !game || stepping) return;
  const upper = key.toUpperCase();
  if (!$("#colour-picker").classList.contains("hidden")) {
    const button = $(`#colour-picker button[data-colour="${upper}"]`);
    if (button) { button.click(); event.preventDefault(); return; }
    if (key === "Escape") { $("#colour-picker").classList.add("hidden"); return; }
  }
  if (/^[1-9]$/.test(key) && game.playable && game.playable[Number(key) - 1]) {
    safely(() => choose(game.playable[Number(key) - 1]))();
    event.preventDefault();
    return;
  }
  if (upper === "N" && !$("#next-hand").classList.contains("hidden")) { $("#next-hand").click(); return; }
  const kinds = Object.entries(MOVE_KEYS).filter(([, k]) => k === upper).map(([kind]) => kind);
  const move = game.moves.find((m) => kinds.includes(m.kind));
  if (move) { safely(() => play(move.action))(); event.preventDefault(); }
});

// ---- replay --------------------------------------------------------------------------

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
  const data = await api("GET", `/api/replays/${encodeURIComponent($("#saved-games").value)}`);
  if (data) openReplay(data);
});
on("#record-file", "change", async () => {
  const file = $("#record-file").files[0];
  if (!file) return;
  const data = await api("POST", "/api/replay-file", await file.text());
  if (data) openReplay(data);
});
on("#open-run", "click", async () => {
  const run = encodeURIComponent($("#runs").value);
  const data = await api("GET", `/api/runs/replay?run=${run}&game=${Number($("#run-game").value)}`);
  if (data) openReplay(data);
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
}
function goto(i) {
  if (!replay) return;
  replay.at = Math.max(0, Math.min(replay.frames.length - 1, i));
  drawFrame();
}
$("#replay-first").addEventListener("click", () => goto(0));
$("#replay-prev").addEventListener("click", () => replay && goto(replay.at - 1));
$("#replay-next").addEventListener("click", () => replay && goto(replay.at + 1));
$("#replay-last").addEventListener("click", () => replay && goto(replay.frames.length - 1));
$("#replay-jump").addEventListener("change", () => goto(Number($("#replay-jump").value)));
$("#show-hands").addEventListener("change", () => replay && drawFrame());

// ---- the lab -------------------------------------------------------------------------

const pct = (x) => (typeof x === "number" ? `${(100 * x).toFixed(1)}%` : "\u2013");
const num = (x, digits = 0) => (typeof x === "number" ? x.toLocaleString("en", { maximumFractionDigits: digits }) : "\u2013");
function when(stamp) {
  if (stamp === null || stamp === undefined) return "";
  const date = typeof stamp === "number" ? new Date(stamp * 1000) : new Date(stamp);
  return Number.isNaN(date.getTime()) ? String(stamp) : date.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}
async function loadLab() {
  const runs = await api("GET", "/api/lab/runs");
  const agents = await api("GET", "/api/lab/agents");
  if (runs) drawRuns(runs);
  if (agents) drawAgents(agents);
}
function drawRuns(runs) {
  const tournaments = runs.tournaments || [], training = runs.training || [];
  const empty = !tournaments.length && !training.length;
  const note = $("#lab-empty");
  note.classList.toggle("hidden", !empty);
  note.textContent = empty
    ? "No runs yet: nothing under the runs folder (--runs-dir). A tournament (uno-lab tournament CONFIG) or a training run (uno-lab train ppo CONFIG) writes there, and it appears here."
    : "";
  $("#lab-runs").classList.toggle("hidden", empty);
  const item = (kind, run, meta) => el("li", {}, el("button", { type: "button", "data-run": run.id, "data-kind": kind,
    onclick: safely(() => (kind === "tournament" ? openTournament(run.id) : openTraining(run.id))) },
  run.name || run.id, el("span", { class: "meta" }, meta)));
  $("#lab-tournaments").replaceChildren(...(tournaments.length ? tournaments.map((t) => item("tournament", t,
    `${num(t.games)} games \u00B7 ${t.format || ""} \u00B7 ${t.num_players} players \u00B7 ${when(t.modified)}`))
    : [el("li", { class: "about" }, "No tournaments.")]));
  $("#lab-training").replaceChildren(...(training.length ? training.map((t) => item("training", t,
    `${t.algorithm || ""} \u00B7 ${num(t.steps)} steps \u00B7 ${when(t.modified)}`))
    : [el("li", { class: "about" }, "No training runs.")]));
}
function markRun(id) { for (const b of $$(".run-list button")) b.classList.toggle("active", b.dataset.run === id); }
// A listed run whose files cannot be read still opens: its page says what is wrong.
function unreadable(kind, id) {
  markRun(id);
  detail(el("h3", {}, `${kind}: ${id}`),
    el("p", { class: "note" }, `This run cannot be shown: ${$("#error").textContent || "its files cannot be read"}`));
}
async function openTournament(id) {
  const t = await api("GET", `/api/lab/tournaments/${segments(id)}`);
  if (!t) { unreadable("Tournament", id); return; }
  markRun(id);
  const board = t.leaderboard || [];
  const lows = board.map((r) => r.elo_low).filter((x) => typeof x === "number");
  const highs = board.map((r) => r.elo_high).filter((x) => typeof x === "number");
  const lo = Math.min(...lows, ...board.map((r) => r.elo)), hi = Math.max(...highs, ...board.map((r) => r.elo));
  const span = hi - lo || 1;
  const interval = (r) => {
    const bar = el("span");
    if (typeof r.elo_low === "number" && typeof r.elo_high === "number") {
      bar.style.left = `${(100 * (r.elo_low - lo)) / span}%`;
      bar.style.width = `${Math.max(1, (100 * (r.elo_high - r.elo_low)) / span)}%`;
    }
    return el("span", { class: "interval", title: `${num(r.elo_low)} to ${num(r.elo_high)}` }, bar);
  };
  const rows = board.map((r, i) => el("tr", {},
    el("td", {}, String(i + 1)), el("td", {}, r.name),
    el("td", {}, num(r.elo)), el("td", {}, `[${num(r.elo_low)}, ${num(r.elo_high)}]`, interval(r)),
    el("td", {}, pct(r.win_rate)), el("td", {}, num(r.games))));
  const table = el("table", { class: "leaderboard" },
    el("thead", {}, el("tr", {}, ...["#", "agent", "Elo", "95% interval", "win rate", "games"].map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows));
  const plots = (t.plots || []).map((name) => el("figure", {},
    el("img", { src: `/api/lab/tournaments/${segments(id)}/plots/${encodeURIComponent(name)}`, alt: `${t.name}: ${name}`, loading: "lazy" }),
    el("figcaption", {}, name)));
  detail(el("h3", {}, `Tournament: ${t.name || t.id}`),
    el("p", { class: "about" }, `${t.format || ""} \u00B7 ${t.num_players} players \u00B7 ${describeRules(t.rules)} \u00B7 ${num(t.games)} games`),
    board.length ? table : el("p", { class: "about" }, "No leaderboard yet."),
    plots.length ? el("div", { class: "plots" }, ...plots) : el("p", { class: "about" }, "No plots."));
}
async function openTraining(id) {
  const t = await api("GET", `/api/lab/training/${segments(id)}`);
  if (!t) { unreadable("Training", id); return; }
  markRun(id);
  const curve = t.curve || [];
  const rows = curve.map((p) => el("tr", {}, el("td", {}, num(p.steps)), el("td", {}, p.opponent),
    el("td", {}, pct(p.win_rate)), el("td", {}, `[${pct(p.ci_low)}, ${pct(p.ci_high)}]`)));
  detail(el("h3", {}, `Training: ${t.name || t.id}`),
    el("p", { class: "about" }, `${t.algorithm || ""} \u00B7 ${t.num_players} players \u00B7 ${describeRules(t.rules)} \u00B7 ${num(t.steps)} steps`),
    curve.length ? el("div", { class: "curve" },
      el("img", { src: `/api/lab/training/${segments(id)}/curve.png`, alt: `${t.name}: win rate against training steps` }),
      el("table", { class: "leaderboard" },
        el("thead", {}, el("tr", {}, ...["steps", "opponent", "win rate", "95% interval"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...rows)))
      : el("p", { class: "about" }, "No evaluations yet."));
}
function detail(...children) {
  const box = $("#lab-detail");
  box.replaceChildren(...children);
  box.classList.remove("hidden");
}
function drawAgents(agents) {
  const box = $("#lab-agents");
  if (!agents.length) { box.replaceChildren(el("p", { class: "about" }, "No shipped agents.")); return; }
  box.replaceChildren(...agents.map((a) => {
    const strength = (a.strength || []).map((s) => el("tr", {}, el("td", {}, `vs ${s.opponent}`),
      el("td", {}, pct(s.win_rate)), el("td", {}, `[${pct(s.ci_low)}, ${pct(s.ci_high)}]`), el("td", {}, `${num(s.games)} games`)));
    return el("div", { class: "agent-card", "data-agent": a.name },
      el("h4", {}, a.title || a.name),
      el("p", { class: "about" }, `${a.name} \u00B7 ${a.algorithm || "?"} \u00B7 ${a.num_players} players \u00B7 ${describeRules(a.rules)}`),
      el("p", { class: "about" }, `observation v${a.observation_version ?? "?"} \u00B7 ${num(a.training_steps)} training steps`),
      a.recipe ? el("p", { class: "about" }, `Recipe: ${typeof a.recipe === "string" ? a.recipe : JSON.stringify(a.recipe)}`) : null,
      strength.length ? el("table", {}, el("tbody", {}, ...strength)) : el("p", { class: "about" }, "Strength not measured."));
  }));
}

// ---- start ---------------------------------------------------------------------------

window.addEventListener("hashchange", safely(async () => {
  if (game && location.hash === `#game=${game.id}`) return;
  if (/^#game=/.test(location.hash)) await resume();
}));
safely(watchWarmup)();
safely(async () => {
  await setup();
  await resume();
})();
