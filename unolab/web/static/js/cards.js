// Cards, seats and the centre of the table as the page draws them, and the narrator's
// lines in words: shared by the live table and the replays.

import { el } from "./common.js";

export const COLOUR_WORDS = { R: "red", Y: "yellow", G: "green", B: "blue" };
export const CSS_COLOURS = { R: "var(--red)", Y: "var(--yellow)", G: "var(--green)", B: "var(--blue)" };

// ---- cards and words -----------------------------------------------------------------

function cardColour(name) { return name.startsWith("W") ? "W" : name[0]; }
function cardValue(name) {
  if (name === "W") return "W";
  if (name === "W+4") return "+4";
  const rank = name.slice(1);
  return { S: "\u2298", R: "\u21C4" }[rank] || rank;
}
export function cardTitle(name) {
  if (name === "W") return "Wild";
  if (name === "W+4") return "Wild Draw Four";
  const rank = { S: "Skip", R: "Reverse", "+2": "Draw Two" }[name.slice(1)] || name.slice(1);
  return `${COLOUR_WORDS[name[0]]} ${rank}`;
}
export function card(name, tag = "div", small = false) {
  const colour = cardColour(name);
  const letter = colour === "W" ? "W" : colour;
  const value = cardValue(name);
  const node = el(tag, { class: `card ${colour}${small ? " small" : ""}${value.length > 1 ? " two" : ""}`, title: cardTitle(name),
    "aria-label": cardTitle(name), type: tag === "button" ? "button" : null },
  el("span", { class: "index", "aria-hidden": "true" }, value),
  el("span", { class: "value", "aria-hidden": "true" }, value === "W" ? "\u2726" : value),
  el("span", { class: "index low", "aria-hidden": "true" }, letter));
  node.dataset.card = name;
  return node;
}
// The back of a card: the same for every card, so that it tells nothing.
export function back() { return el("span", { class: "back", "aria-hidden": "true" }); }
// The most backs a seat shows; its count says the rest.
export const MAX_BACKS = 24;
export function swatch(letter) {
  const node = el("span", { class: "swatch" });
  node.style.background = letter ? CSS_COLOURS[letter] : "#888";
  return node;
}
// The narrator writes cards by their codes (B7, W+4); the page says them in words.
export function words(line) {
  return line
    .replace(/\bW\+4\b/g, "Wild Draw Four")
    .replace(/\b([RYGB])\+2\b/g, (_, c) => `${COLOUR_WORDS[c]} Draw Two`)
    .replace(/\b([RYGB])([0-9SR])\b/g, (m) => cardTitle(m))
    .replace(/\bW\b(?!:)/g, "Wild")
    .replace(/'(draw|pass|keep|uno|challenge|accept|catch)'/g, (_, a) => `\u201C${a}\u201D`)
    .replace(/^you /, "You ");
}
export function seatBox(seat, how) {
  const { cards, last, winner, acting, thinking } = how;
  const classes = ["seat", seat.current && !acting ? "current" : "", acting ? "acting" : "", winner ? "winner" : "",
    thinking ? "thinking" : ""];
  const label = seat.agent ? el("span", { class: "agent" }, ` (${seat.agent})`) : null;
  const name = seat.agent ? seat.name.replace(` (${seat.agent})`, "") : seat.name;
  const box = el("div", { class: classes.filter(Boolean).join(" "), "data-seat": String(seat.seat) },
    el("div", { class: "who" }, name, label),
    how.backs ? el("div", { class: "backs", "data-count": String(seat.count) },
      ...Array.from({ length: Math.min(seat.count, MAX_BACKS) }, back)) : null,
    el("div", { class: "stats" }, el("span", { class: "count" }, `${seat.count} card${seat.count === 1 ? "" : "s"}`), ` \u00B7 ${seat.score} pts`));
  if (winner) box.append(el("span", { class: "badge win" }, "\u2605 won"));
  if (thinking) box.append(el("span", { class: "badge thinking", role: "status" }, el("span", { class: "spinner", "aria-hidden": "true" }), " thinking\u2026"));
  else if (seat.current && !winner) box.append(el("span", { class: "badge turn" }, "to play"));
  if (seat.out) box.append(el("span", { class: "badge" }, "out"));
  if (seat.count === 1 && !seat.catchable && !seat.out) box.append(el("span", { class: "badge uno-call" }, "UNO!"));
  if (seat.catchable) box.append(el("span", { class: "badge" }, "no UNO called!"));
  if (last !== undefined) {
    box.append(el("div", { class: "last" }, last ? card(last, "div", true) : null, el("span", { class: "label" }, last ? "last played" : "nothing played yet")));
  }
  if (cards && seat.cards) box.append(el("div", { class: "cards" }, ...seat.cards.map((c) => card(c, "div", true))));
  return box;
}
export function centre(table, box) {
  const dir = table.direction > 0 ? "\u21BB clockwise" : "\u21BA counter-clockwise";
  box.replaceChildren(
    el("div", { class: "pile", title: "draw pile" }, String(table.draw_pile)),
    card(table.top),
    el("div", {}, swatch(table.colour), " ", table.colour ? COLOUR_WORDS[table.colour] : "colour not named"),
    el("div", {}, dir));
}
