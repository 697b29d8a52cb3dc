// The Play tab's setup: the rules and the house rules in words, the opponents that fit
// them, Deal, and the engine's first compile (a Deal clicked meanwhile waits for it).

import { $, $$, api, el, loadOptions, on, options, sleep } from "./common.js";
import { openTable } from "./friends.js";
import { attach, setSeatToken, showEvents } from "./table.js";

const PRESET_WORDS = {
  official: "The official rules.",
  street: "Street rules: stacking Draw Twos and Wild Draw Fours that add up, draw until a card plays, jump-in.",
  seven_zero: "The official rules with seven-zero: a 7 swaps hands, a 0 passes every hand on.",
  rlcard: "The RLCard benchmark's rules (two players, no UNO call, Wild Draw Four as a last resort).",
};

// ---- setup: the rules in words -------------------------------------------------------

// Each group of house rules, each rule in plain words: [switch, its name, the words of its
// choices, a sentence more]. This table is where the page's rule texts come from (the
// wording of uno_env/text/rules_words.py, which tells the rules to a language model); a
// config key or value is never shown.
const RULE_GROUPS = [
  { title: "Stacking", about: "Answer a draw penalty with another card instead of drawing.", rules: [
    ["stack_draw_two", "Draw Two on a Draw Two"],
    ["stack_draw_four", "Wild Draw Four on a Wild Draw Four"],
    ["stack_draw_two_on_four", "Draw Two (of the named colour) on a Wild Draw Four"],
    ["stack_draw_four_on_two", "Wild Draw Four on a Draw Two"],
    ["stack_cumulative", "Stacked penalties add up", null, "Otherwise the penalty that started the chain passes on unchanged."],
    ["reverse_deflects", "A Reverse sends a penalty back", null, "Played in the colour to match, it sends the cards back to whoever sent them."]] },
  { title: "Jump-in", rules: [["jump_in", "Jump in out of turn with the identical card", null,
    "Same colour and figure as the card just played (never a Wild Draw Four); play goes on from the one who jumped in."]] },
  { title: "Seven-zero", rules: [["seven_zero", "A 7 swaps hands with a player you choose; a 0 passes every hand on", null,
    "A 0 passes every hand to the next player in the direction of play."]] },
  { title: "Drawing", rules: [
    ["draw_rule", "A draw takes", { one: "one card (official)", until_playable: "cards until one plays" }],
    ["draw_cap", "Most cards one draw takes", null, "When drawing goes on until a card plays."],
    ["voluntary_draw", "You may draw even when a card plays", null, "Otherwise you draw only when none of your cards plays."],
    ["after_draw", "A playable drawn card", { choose: "may be played or kept (official)", rlcard: "is played at once (RLCard)" },
      "No other card may be played in that turn."]] },
  { title: "Wild Draw Four", rules: [["wd4", "When a Wild Draw Four may be played", null,
    "Officially only by a player holding no card of the colour to match, and the next player may challenge it."]] },
  { title: "Calling UNO", rules: [
    ["uno_call", "You must call UNO at two cards; a missed call can be caught", null,
      "Off, calling UNO is automatic and nobody is ever caught."],
    ["uno_penalty", "Cards drawn when caught"]] },
  { title: "Wilds", rules: [["colours_in_circle", "A wild names the next colour in the circle red, yellow, green, blue", null,
    "Its player does not choose the colour."]] },
  { title: "The table", rules: [
    ["two_player_rules", "Two-player rules (a Reverse acts as a Skip)", { None: "with exactly two players (official)", True: "always", False: "never" }],
    ["teams", "Two teams of partners sitting opposite (4 players)", null, "The hand ends when either partner goes out, and both score."],
    ["play_to_last", "Play on until one player is left", null, "The first player out still wins the hand."]] },
  { title: "Scoring", rules: [
    ["scoring", "Points", { winner_takes: "the winner scores the cards left (official)", penalty_points: "each scores their own cards; the lowest total wins" },
      "Numbers count their value; Skip, Reverse and Draw Two 20; wilds 50."],
    ["zero_scores_fifty", "A lone 0 left in a hand counts 50"]] },
  { title: "The first card", rules: [
    ["starter_redraw_wilds", "Any wild turned up first is put back, not only a Wild Draw Four"],
    ["starter_draw_two_skips", "A Draw Two turned up first skips the first player", null,
      "Otherwise the first player draws two and still plays (RLCard)."],
    ["starter_wild_colour", "A Wild turned up first", { choose: "the first player names its colour", random: "gets a colour at random" }]] },
  { title: "Advanced", rules: [
    ["hand_size", "Cards dealt to each player"],
    ["max_turns", "Moves after which a hand is cut short", null, "A hand cut short has no winner and scores nothing."],
    ["reshuffle_top", "A reshuffle takes the top discard too (RLCard)", null,
      "When the draw pile runs out; otherwise the top card stays on the table."]] },
];
const WD4_MODES = {
  challenge: ["a bluff may be challenged (official)", { wd4_challenge: true, wd4_anytime: false, wd4_last_resort: false }],
  strict: ["only with no card of the colour (no bluffing)", { wd4_challenge: false, wd4_anytime: false, wd4_last_resort: false }],
  anytime: ["any time, never challenged", { wd4_challenge: false, wd4_anytime: true, wd4_last_resort: false }],
  last_resort: ["only when nothing else plays (RLCard)", { wd4_challenge: false, wd4_anytime: false, wd4_last_resort: true }],
};
// A rule the page has no words for yet is shown by its name, spelt as words.
function plain(value) {
  return { None: "as usual", True: "yes", False: "no" }[value] || String(value).replace(/_/g, " ");
}
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
    return el("select", { "data-rule": name }, ...values.map((v) => el("option", { value: v }, (choices && choices[v]) || plain(v))));
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
  const others = options.switches.filter((s) => !placed.has(s.name)).map((s) => [s.name, plain(s.name)]);
  if (others.length) groups.push({ title: "Other", rules: others });
  for (const group of groups) {
    const set = el("fieldset", { class: "rule-group" }, el("legend", {}, group.title));
    if (group.about) set.append(el("p", { class: "about" }, group.about));
    for (const [name, title, choices, extra] of group.rules) {
      const input = ruleInput(name, choices);
      if (!input) continue;
      const about = extra || "";
      const label = input.type === "checkbox"
        ? el("label", { class: "rule", "data-for": name }, input, " " + title, el("span", { class: "about" }, about), el("span", { class: "about why" }))
        : el("label", { class: "rule choice", "data-for": name }, title, input, el("span", { class: "about" }, about), el("span", { class: "about why" }));
      set.append(label);
    }
    box.append(set);
  }
  for (const input of $$("#switches [data-rule]")) input.addEventListener("change", () => { constrain(input); renderOpponents(); });
  loadPreset();
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
  if (agent.kind === "llm") return `${agent.label} (language model${agent.unavailable ? ", unavailable" : ""})`;
  const kind = agent.kind === "bot" ? "" : agent.kind === "search" ? " (search)" : ` (${agent.kind === "shipped" ? "trained" : "your folder"})`;
  return agent.label + kind;
}
// What the card of an agent says: for a language model, its model and the endpoint's host
// (never a key: the server never sends one), or why it cannot play here.
function agentAbout(a) {
  if (a.kind === "llm") {
    if (a.unavailable) return `language model, unavailable: ${a.unavailable}`;
    return `language model ${a.model} at ${a.endpoint} \u00B7 each of its moves takes a few seconds`;
  }
  return [a.about, a.strength ? `strength: ${a.strength}` : ""].filter(Boolean).join(" \u00B7 ");
}
// The agent the player chose for each seat: kept while the rules rule it out, so that it
// comes back when they fit it again. "person": a seat for a friend, who joins by the link.
const PERSON = "person";
const wantedAgents = {};
function renderOpponents() {
  const box = $("#opponent-list");
  box.replaceChildren();
  const rules = chosenRules();
  const agents = options.agents.filter((a) => fits(a, rules));
  const replaced = [];
  for (let seat = 1; seat < rules.num_players; seat++) {
    const select = el("select", { "data-seat": String(seat) },
      ...agents.map((a) => el("option", { value: a.id, title: a.about || "", disabled: Boolean(a.unavailable), "data-kind": a.kind }, agentLabel(a))),
      el("option", { value: PERSON, "data-kind": PERSON }, "a friend, who joins by a link"));
    const wanted = wantedAgents[seat];
    if (wanted && wanted !== PERSON && !agents.some((a) => a.id === wanted)) replaced.push([seat, wanted]);
    select.value = wanted === PERSON || agents.some((a) => a.id === wanted) ? wanted : "mixbot";
    const about = el("span", { class: "about" });
    const describe = () => {
      const a = options.agents.find((x) => x.id === select.value);
      about.textContent = select.value === PERSON ? "a seat for a friend: you get a link to send them" : a ? agentAbout(a) : "";
      renderFriends();
    };
    select.addEventListener("change", () => { wantedAgents[seat] = select.value; describe(); });
    describe();
    box.append(el("label", { class: "opponent" }, `player_${seat} `, select, about));
  }
  renderNote(rules, replaced);
  const standIn = $("#stand-in");
  const kept = standIn.value || "mixbot";
  standIn.replaceChildren(...agents.filter((a) => a.kind !== "llm" && !a.unavailable)
    .map((a) => el("option", { value: a.id }, agentLabel(a))));
  standIn.value = [...standIn.options].some((o) => o.value === kept) ? kept : "mixbot";
  renderFriends();
}
// Some seat is for a friend: the table's settings show, and Deal opens the table.
function withFriends() { return $$("#opponent-list select").some((s) => s.value === PERSON); }
function renderFriends() {
  $("#friends-setup").classList.toggle("hidden", !withFriends());
  renderConsent();
  renderDeal();
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
export function describeRules(rules) {
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
export async function setup() {
  if (!(await loadOptions())) return;
  for (const name of Object.keys(options.presets)) $("#preset").append(el("option", { value: name }, name));
  $("#preset").addEventListener("change", () => { $("#preset-about").textContent = PRESET_WORDS[$("#preset").value] || ""; loadPreset(); renderOpponents(); });
  $("#num-players").addEventListener("change", () => { constrain(); renderOpponents(); });
  $("#target-score").addEventListener("change", () => constrain());
  $("#preset-about").textContent = PRESET_WORDS[$("#preset").value] || "";
  renderSwitches();
  renderOpponents();
}
// Where the server keeps games as data (serve --collect-human-games), the form says so and
// asks before each game: the box starts unticked, so a game is kept only when ticked.
function renderConsent() {
  $("#data-consent").classList.toggle("hidden", !(options && options.collect_human_games) || withFriends());
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
  if (withFriends()) {
    Object.assign(body, {
      name: $("#host-name").value.trim(),
      stand_in: $("#stand-in").value,
      away_seconds: Number($("#away-seconds").value),
      turn_seconds: Number($("#turn-seconds").value),
    });
    if (await openTable(body)) $("#setup-note").classList.add("hidden");
    return;
  }
  setSeatToken(null);
  if (options.collect_human_games) body.keep_as_data = $("#keep-as-data").checked;
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
  button.textContent = waiting ? "Dealing when the engine is ready\u2026" : withFriends() ? "Open the table" : "Deal";
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
export async function watchWarmup() {
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

