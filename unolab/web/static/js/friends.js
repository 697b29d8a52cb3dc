// Play with friends: a table for several people. The host opens it (setup.js sends the
// form here), shares its link (#table=<id>), and each friend who opens the link takes an
// open seat. Each seat's secret token stays in its own browser (localStorage) and goes
// with every request of the seat; without one the page watches, public information only.
// The page asks the server every second or so whether anything changed (a version string:
// an unchanged table answers a few bytes), and shows the others' moves as they come.

import { $, api, el, lastStatus, on, sleep, stepping } from "./common.js";
import { addLog, attach, game, hooks, logCount, me, seatHeaders, setSeatToken, showEvents } from "./table.js";

const POLL_MS = 1200;
const tokenKey = (id) => `uno-table:${id}`;

function savedToken(id) {
  try { return localStorage.getItem(tokenKey(id)); } catch (_) { return null; }
}
function saveToken(id, token) {
  try { localStorage.setItem(tokenKey(id), token); } catch (_) { /* a private window: the seat lasts as long as the page */ }
}
function forgetToken(id) {
  try { localStorage.removeItem(tokenKey(id)); } catch (_) { /* nothing kept */ }
}

// ---- opening a table (the setup form's "Open the table") -------------------------------

export async function openTable(body) {
  const view = await api("POST", "/api/tables", body);
  if (!view) return false;
  saveToken(view.id, view.token);
  setSeatToken(view.token);
  attach(view, true);
  watch(view.id);
  return true;
}

// ---- taking up a table by its link ---------------------------------------------------

export async function resumeTable() {
  const m = /^#table=([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  if (!m) return false;
  const id = m[1];
  let token = savedToken(id);
  setSeatToken(token);
  let view = await api("GET", `/api/tables/${id}`, undefined, seatHeaders());
  if (!view && lastStatus === 403 && token) {
    // A token of no seat here (the table was opened again elsewhere): watch instead.
    forgetToken(id);
    token = null;
    setSeatToken(null);
    view = await api("GET", `/api/tables/${id}`);
  }
  if (!view) {
    history.replaceState(null, "", location.pathname + location.search);
    const note = $("#setup-note");
    note.textContent = "That table is no longer held by the server (it sat idle too long, or its link is wrong); finished hands are under Replay.";
    note.classList.remove("hidden");
    return false;
  }
  attach(view, true);
  watch(id);
  return true;
}

on("#join-form", "submit", async (event) => {
  event.preventDefault();
  if (!game || !game.shared) return;
  const id = game.id;
  const view = await api("POST", `/api/tables/${id}/join`, { name: $("#join-name").value.trim() });
  if (!view) return;
  saveToken(id, view.token);
  setSeatToken(view.token);
  attach(view, true);
});
on("#start-table", "click", async () => {
  if (!game || !game.shared) return;
  const view = await api("POST", `/api/tables/${game.id}/start`, undefined, seatHeaders());
  if (!view) return;
  addLog(view.log);
  await showEvents(view);
});
on("#copy-link", "click", async () => {
  const input = $("#share-link");
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    $("#copy-link").textContent = "Copied";
  } catch (_) {
    $("#copy-link").textContent = "Select and copy it";
  }
});

// ---- keeping up with the others ------------------------------------------------------

let watching = null;  // the id of the table being polled
function watch(id) {
  if (watching === id) return;
  watching = id;
  poll(id);
}
async function poll(id) {
  let wait = POLL_MS;
  while (watching === id) {
    await sleep(wait);
    if (watching !== id) return;
    if (!game || game.id !== id || !game.shared) { watching = null; return; }
    if (stepping || document.body.dataset.busy === "1") { wait = 200; continue; }
    const query = new URLSearchParams({ version: game.version, log_from: String(logSeen()), events_after: String(game.seq) });
    const data = await api("GET", `/api/tables/${id}?${query}`, undefined, seatHeaders());
    if (!game || game.id !== id) return;
    if (!data) {
      // A table taken out of play, or a token no longer valid, stops the polling.
      if (lastStatus >= 400 && lastStatus < 500) { watching = null; return; }
      wait = 5 * POLL_MS;
      continue;
    }
    wait = POLL_MS;
    if (data.changed === false) { setTimer(data.turn_left); continue; }
    if (data.log_from > logSeen()) { attach(data, true); continue; }
    addLog(data.log);
    await showEvents(data);
  }
}
function logSeen() { return logCount; }

// ---- what the table shows of its people ----------------------------------------------

let deadline = null;  // when the turn in play runs out (Date.now() milliseconds)
let timerFor = null;
function setTimer(left) {
  if (left === null || left === undefined) { deadline = null; showTimer(); return; }
  deadline = Date.now() + left * 1000;
  showTimer();
}
function showTimer() {
  const box = $("#turn-timer");
  if (!game || !game.shared || deadline === null || game.hand_over || timerFor === null) {
    box.classList.add("hidden");
    return;
  }
  const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  const whose = timerFor === me ? "Your turn" : `${game.table.seats[timerFor].name}'s turn`;
  $("#turn-words").textContent = `${whose}: ${left} s left` +
    (timerFor === me ? " (then your seat draws, or passes, for you)" : "");
  $("#turn-bar").style.width = `${Math.min(100, (100 * (deadline - Date.now())) / (1000 * game.shared.turn_seconds)).toFixed(1)}%`;
  box.classList.toggle("low", left <= 10);
  box.classList.remove("hidden");
}
setInterval(showTimer, 250);

const STATE_WORDS = { here: "here", away: "away", open: "open seat" };
function drawFriends() {
  const shared = game && game.shared;
  $("#friends").classList.toggle("hidden", !shared);
  if (!shared) { watching = null; return; }
  if (stepping) return;
  $("#share-link").value = `${location.origin}${location.pathname}#table=${game.id}`;
  const open = shared.people.filter((p) => p.state === "open");
  $("#people").replaceChildren(...shared.people.map((p) => el("li", { "data-seat": String(p.seat), "data-state": p.state },
    el("strong", {}, p.seat === shared.seat ? "you" : p.name || `seat ${p.seat}`),
    p.seat === 0 ? " (host)" : null, ` \u00B7 ${STATE_WORDS[p.state]}`,
    p.state !== "here" && shared.started ? ` \u2014 ${shared.stand_in} plays this seat${p.state === "away" ? " until they are back" : ""}` : null)));
  const watcher = shared.seat === null;
  $("#join-form").classList.toggle("hidden", !watcher || !open.length || game.match_over);
  $("#watching").classList.toggle("hidden", !watcher);
  $("#watching").textContent = game.match_over ? "You are watching: the game is over."
    : open.length ? "You are watching: you see the table, never anyone's cards. Take a seat to play."
      : "Every seat is taken: you are watching the table, never anyone's cards.";
  // The host starts the game; anyone seated may once the host is away.
  const hostAway = shared.people.some((p) => p.seat === 0 && p.state !== "here");
  $("#start-table").classList.toggle("hidden", watcher || shared.started || !(shared.host || hostAway));
  $("#new-game").textContent = watcher ? "Stop watching" : "Leave the table";
  // Each seat at the table says who is away (and which bot plays it meanwhile).
  for (const p of shared.people) {
    const box = document.querySelector(`#seats [data-seat="${p.seat}"]`);
    if (!box) continue;
    if (p.state === "away") box.append(el("span", { class: "badge away" }, `away: ${shared.stand_in} plays`));
    if (p.state === "open") box.append(el("span", { class: "badge away" }, shared.started ? `open: ${shared.stand_in} plays` : "open seat"));
  }
  const line = $("#situation");
  if (!shared.started) {
    line.textContent = shared.host
      ? `Share the link, then start the game when your friends are seated (${open.length} open seat${open.length === 1 ? "" : "s"}; a bot plays any seat still open).`
      : hostAway ? "The host is away: any of you may start the game."
        : "Waiting for the host to start the game\u2026";
  } else if (!game.your_turn && !game.hand_over && game.table.current !== null) {
    const seat = game.table.seats[game.table.current];
    if (seat) line.textContent = `${seat.name} ${seat.name === "you" ? "are" : "is"} playing\u2026`;
  }
  const current = game.table.current;
  timerFor = shared.turn_left === null || current === null ? null : current;
  setTimer(shared.turn_left);
}
hooks.drawn = drawFriends;
