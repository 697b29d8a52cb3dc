// The Play tab's table: a game in play, the bots' moves shown one by one, your moves by
// click or key, the end of a hand, and a reload that takes the game up again. A table for
// several people is drawn the same way from its seat's side (friends.js adds the seats,
// the link, the turn timer and the polling).

import { $, api, el, lastStatus, on, options, pageKey, safely, setStepping, show, showError, sleep, stepping } from "./common.js";
import { COLOUR_WORDS, CSS_COLOURS, MAX_BACKS, card, cardTitle, seatBox, swatch, words } from "./cards.js";
import { deal, fan, fly, rect } from "./motion.js";

export let game = null;  // the current game's view
// Your seat (null: you watch a table for several people), and that seat's token.
export let me = 0;
export let seatToken = null;
// What friends.js adds after each picture of the table.
export const hooks = { drawn: null };
// Sentences in the log so far (a poll asks for the ones after them).
export let logCount = 0;
// Where the current game's API is, and what each request of your seat carries.
export function base() { return game && game.shared ? `/api/tables/${game.id}` : `/api/games/${game.id}`; }
export function seatHeaders() { return seatToken ? { "X-Seat-Token": seatToken } : {}; }
export function setSeatToken(token) { seatToken = token; }
// What the table shows now, so that what changes can move: the cards of your hand and each
// seat's count (a card that is new there is dealt from the pile), and where the card you
// just played lay in your hand (it flies from there to the pile).
let shownHand = [];
let shownCounts = [];
let shownHandNo = null;
let playedFrom = null;

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
on("#tab-play", "click", () => show(game ? "table-view" : "setup"));

function stepDelay() { return Number($("#speed").value); }
$("#speed").value = localStorage.getItem("uno-speed") || "450";
$("#speed").addEventListener("change", () => localStorage.setItem("uno-speed", $("#speed").value));

// Take up a game: its id goes in the address, so that a reload comes back to it. ``base``
// is what to draw first (a new deal before the bots' first moves are shown).
export function attach(view, fresh, first) {
  game = first || view;
  me = view.shared ? view.shared.seat : 0;
  if (!view.shared) seatToken = null;
  const hash = view.shared ? `#table=${view.id}` : `#game=${view.id}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
  if (fresh) { $("#log").replaceChildren(); shownHand = []; shownCounts = []; logCount = 0; }
  addLog(view.log);
  show("table-view");
  drawGame();
}
export function addLog(lines) {
  logCount += lines.length;
  for (const line of lines) $("#log").append(el("li", {}, words(line)));
  $("#log").scrollTop = $("#log").scrollHeight;
}
// The centre: the pile, the top card (flown in from ``from``, where it was played), the
// colour to match and the direction of play.
function drawCentre(top, colour, direction, pile, from) {
  const old = $("#top");
  const topCard = card(top);
  topCard.id = "top";
  $("#top-box").replaceChildren(topCard);
  if (from && !(old && old.dataset.card === top && !from.always)) fly(topCard, from.rect || from);
  $("#colour-now").replaceChildren(swatch(colour), " ", colour ? COLOUR_WORDS[colour] : "colour not named");
  const turning = $("#direction");
  turning.classList.toggle("ccw", direction < 0);
  turning.title = direction > 0 ? "play goes clockwise" : "play goes counter-clockwise";
  turning.replaceChildren(el("span", { class: "turn-arrow", "aria-hidden": "true" }, "\u21BB"),
    el("span", { class: "turn-words" }, direction > 0 ? "clockwise" : "counter-clockwise"));
  if (pile !== null) $("#pile-count").textContent = String(pile);
}
// Where a seat's cards are on screen (a card it plays flies from there).
function seatRect(seat) {
  if (seat === me && playedFrom) return playedFrom;
  return rect($(`#seats [data-seat="${seat}"] .backs`) || $(`#seats [data-seat="${seat}"]`));
}
function winnerSeats() {
  if (!game.hand_over || !game.reveal) return new Set();
  if (game.match_over && game.reveal.match_winners) return new Set(game.reveal.match_winners);
  return new Set(game.reveal.winner === null ? [] : [game.reveal.winner]);
}
function drawSeats(actingSeat) {
  const winners = winnerSeats();
  const thinking = actingSeat === null && game.thinking !== undefined ? game.thinking : null;
  $("#seats").replaceChildren(...game.table.seats.map((s) => seatBox(s, {
    cards: false, last: game.last_cards ? game.last_cards[s.seat] : undefined, backs: s.seat !== me,
    winner: winners.has(s.seat), acting: s.seat === actingSeat, thinking: s.seat === thinking })));
  // The backs an opponent took since the last picture come from the pile.
  const pile = rect($("#pile"));
  for (const box of document.querySelectorAll("#seats .backs")) {
    fan(box, { spread: 0.34, narrow: 0.34, tilt: 2 });
    const seat = Number(box.parentNode.dataset.seat);
    const before = Math.min(shownCounts[seat] ?? 0, MAX_BACKS);
    deal([...box.children].slice(before), pile);
  }
  shownCounts = game.table.seats.map((s) => s.count);
}
// Lay the hand and the opponents' backs out again when the page changes width.
function refan() {
  fan($("#hand"));
  for (const box of document.querySelectorAll("#seats .backs")) fan(box, { spread: 0.34, narrow: 0.34, tilt: 2 });
}
window.addEventListener("resize", refan);
function drawGame(from = null) {
  const t = game.table;
  document.body.dataset.seq = String(game.seq);
  document.body.dataset.game = game.id;
  $("#table-line").textContent = `Hand ${t.hand}, move ${game.seq} \u00B7 first to ${t.target_score} points \u00B7 seed ${game.seed}`;
  if (shownHandNo !== t.hand) { shownHand = []; shownCounts = []; shownHandNo = t.hand; }
  drawSeats(null);
  drawCentre(t.top, t.colour, t.direction, t.draw_pile, from);
  $("#ticker").textContent = "";
  const moves = game.moves;
  const draw = moves.find((m) => m.kind === "draw");
  $("#pile").disabled = !draw;
  $("#pile").title = draw ? `${moveWords(draw)} (D)` : "draw pile";
  drawSituation();
  const mine = me === null ? null : t.seats[me];
  const plays = moves.filter((m) => m.kind === "play");
  const playable = [];
  $("#hand").classList.toggle("hidden", game.hand_over || !mine);
  $("#hand").replaceChildren(...(game.hand_over || !mine ? [] : mine.cards || []).map((name) => {
    const node = card(name, "button");
    const choices = plays.filter((m) => m.card === name);
    if (choices.length && !playable.some((p) => p[0].card === name)) {
      playable.push(choices);
      node.classList.add("playable");
      node.title = `${cardTitle(name)}: play it (${playable.length <= 9 ? playable.length : "click"})`;
      node.addEventListener("click", safely(() => { playedFrom = rect(node); return choose(choices); }));
    } else if (choices.length) {
      node.classList.add("playable");
      node.addEventListener("click", safely(() => { playedFrom = rect(node); return choose(choices); }));
    } else {
      node.classList.add("locked");
      node.disabled = true;
      node.title = `${cardTitle(name)}: cannot be played now`;
    }
    if (t.drawn === name) node.classList.add("drawn");
    return node;
  }));
  game.playable = playable;
  fan($("#hand"));
  // The cards that are new in your hand (the deal, a draw) come from the pile.
  const left = [...shownHand];
  const arrived = [...$("#hand").children].filter((node) => {
    const i = left.indexOf(node.dataset.card);
    if (i >= 0) left.splice(i, 1);
    return i < 0;
  });
  deal(arrived, rect($("#pile")));
  shownHand = game.hand_over || !mine ? [] : [...(mine.cards || [])];
  $("#moves").replaceChildren(...moves.filter((m) => m.kind !== "play").map(moveButton));
  $("#colour-picker").classList.add("hidden");
  $("#next-hand").classList.toggle("hidden", !game.hand_over || game.match_over || me === null);
  drawResult();
  if (hooks.drawn) hooks.drawn();
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
  } else if (game.thinking !== null && game.thinking !== undefined) {
    const seat = game.table.seats[game.thinking];
    line.textContent = `${seat ? seat.name : "The model"} is thinking (a language model: its answer takes a few seconds)\u2026`;
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
  const move = game.moves.find((m) => m.action === action);
  if (move && move.kind === "play" && !playedFrom) playedFrom = rect($(`#hand [data-card="${move.card}"]`));
  const view = await api("POST", `${base()}/moves`, { action, seq: game.seq }, seatHeaders());
  if (!view) return reload();
  await advance(view);
}
// A refused move (a stale page, say) leaves the game as it was: take up the server's view.
export async function reload() {
  if (!game) return;
  const view = await api("GET", base(), undefined, seatHeaders());
  if (view) {
    const message = $("#error").textContent;
    attach(view, true);
    showError(message);
  }
}
async function advance(view) {
  // At a table for several people, sentences told since the page last asked come first.
  if (view.log_from > logCount) return reload();
  addLog(view.log);
  await showEvents(view);
}
// Show the steps of an answer one by one (the bots' moves between two of yours): the seat
// that acts lights up, its card lands on the pile, the counts change, the words appear.
export async function showEvents(view) {
  const all = view.events || [];
  const events = all.filter((e) => e.seat !== me);
  const delay = stepDelay();
  const before = game;
  // Your own move shows first: the card you played flies to the pile.
  const firstBot = all.findIndex((e) => e.seat !== me);
  const yours = (firstBot < 0 ? all : all.slice(0, firstBot)).filter((e) => e.seat === me).pop();
  let stepped = false;
  if (events.length && delay > 0 && before) {
    stepped = true;
    setStepping(true);
    document.body.dataset.busy = "1";
    try {
      // While the bots move, your hand is the one after your move, none of it playable.
      const seats = before.table.seats.map((s) => ({ ...s, current: false }));
      if (me !== null) seats[me] = { ...seats[me], cards: view.table.seats[me].cards };
      game = { ...before, moves: [], your_turn: false, hand_over: false, match_over: false, reveal: null,
        table: { ...before.table, seats }, last_cards: [...(before.last_cards || [])] };
      drawGame();
      if (yours) {
        Object.assign(game.table, { top: yours.top, colour: yours.colour, direction: yours.direction });
        drawCentre(yours.top, yours.colour, yours.direction, null, yours.card ? seatRect(me) : null);
      }
      for (const e of events) {
        if (e.hand !== game.table.hand) {
          game.table.hand = e.hand;
          game.last_cards = game.last_cards.map(() => null);
        }
        game.table.seats.forEach((s) => { s.count = e.counts[s.seat]; });
        if (e.card) game.last_cards[e.seat] = e.card;
        const from = e.card ? seatRect(e.seat) : null;
        drawSeats(e.seat);
        drawCentre(e.top, e.colour, e.direction, null, from ? { rect: from, always: true } : null);
        $("#ticker").textContent = e.lines.map(words).join(" ");
        await sleep(delay);
      }
    } finally {
      setStepping(false);
    }
  }
  // Shown at once (no bot moved, or the instant speed): the last card played flies in.
  const played = all.filter((e) => e.card).pop();
  const from = !stepped && played && played.hand === view.table.hand ? seatRect(played.seat) : null;
  game = view;
  drawGame(from);
  playedFrom = null;
  if (events.length) $("#ticker").textContent = events[events.length - 1].lines.map(words).join(" ");
  document.body.dataset.busy = "0";
  await think();
}
// A language model's move is asked apart (its answer takes seconds): the seat shows it
// thinking meanwhile, and the moves that follow are shown as the bots' are. An endpoint
// that failed is said in the header, in one line: the seat played its fallback move.
async function think() {
  if (!game || game.hand_over || game.thinking === null || game.thinking === undefined) {
    if (game && game.agent_error) showError(game.agent_error);
    return;
  }
  const asked = game;
  const view = await api("POST", `/api/games/${game.id}/agent-move`, { seq: game.seq });
  if (!view) return;
  if (game !== asked) return;  // another game was taken up meanwhile
  addLog(view.log);
  await showEvents(view);
  if (view.agent_error) showError(view.agent_error);
}
// The end of a hand: who won, the points, the score against the target, every hand.
function drawResult() {
  const box = $("#result");
  box.classList.toggle("hidden", !game.hand_over);
  if (!game.hand_over) { box.replaceChildren(); return; }
  const r = game.reveal, seats = game.table.seats;
  const subject = (seat) => (seat === me ? "You" : seats[seat].name);
  const verb = (seat, third, first) => (seat === me ? first : third);
  let headline;
  if (r.winner === null) headline = "The hand was cut short: no winner, no points";
  else if (r.scoring === "penalty_points") {
    headline = `${subject(r.winner)} ${verb(r.winner, "goes", "go")} out; the others take their cards' points`;
  } else {
    headline = `${subject(r.winner)} ${verb(r.winner, "wins", "win")} the hand, +${r.hand_points[r.winner]}`;
  }
  const order = seats.map((s) => s.seat).sort((a, b) => (r.scoring === "penalty_points" ? r.scores[a] - r.scores[b] : r.scores[b] - r.scores[a]));
  const scoreList = order.map((s) => `${s === me ? "you" : seats[s].name} ${r.scores[s]}`).join(" \u00B7 ");
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
    el("td", {}, s.seat === r.winner ? "\u2605 " : "", s.seat === me ? "you" : s.name),
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
  const view = await api("POST", `${base()}/next-hand`, { seq: game.seq }, seatHeaders());
  if (view) return advance(view);
  // At a table for several people another player may have dealt it first: take it up.
  if (game.shared && lastStatus === 409) showError("");
  return reload();
});
function confirmAbandon() {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = game.shared
    ? (me === null ? "Stop watching this table? Its link brings you back."
      : "Leave this table? Your seat stays yours: open the table's link again to come back (a bot plays for you while you are away).")
    : `Abandon this match (hand ${game.table.hand}, score ${game.table.seats.map((s) => s.score).join("-")})? ` +
      "Hands already finished are saved under Replay; the hand in play is lost.";
  $("#confirm-yes").textContent = game.shared ? "Leave" : "Abandon it";
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
export async function resume() {
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
  await think();
  return true;
}


// ---- keys ----------------------------------------------------------------------------

document.addEventListener("keydown", (event) => {
  if (!pageKey(event)) return;
  const key = event.key;
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
