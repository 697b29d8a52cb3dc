// How the table moves: a hand laid out as a fan, cards dealt from the pile and flown to
// it. Every movement is short (a quarter of a second) and none happens when the system
// asks for reduced motion: the cards are then simply where they belong.

const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");
export function moving() { return !reduced.matches; }

export const FLIGHT_MS = 260;
// A deal lays its cards one after the other, all of them within this.
const DEAL_MS = 520;

// Lay a row of cards out as a fan that fits its box: each card ``spread`` card widths
// after the last where there is room (a desktop), closer, overlapping, where there is
// not (a phone), each tilted a little along an arc.
export function fan(box, { spread = 1.06, narrow = 0.56, tilt = 3 } = {}) {
  const cards = [...box.children];
  const n = cards.length;
  if (!n) return;
  const width = cards[0].offsetWidth;
  const style = getComputedStyle(box);
  const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const wide = window.innerWidth > 600;
  const angle = n > 1 ? Math.min(tilt, 36 / n) : 0;
  // A tilted card reaches a little further out than its width: leave room for it.
  const slack = width * 0.5 * Math.sin((Math.abs(angle) * (n - 1) / 2) * Math.PI / 180);
  let step = width * (wide ? spread : narrow);
  if (n > 1) step = Math.max(6, Math.min(step, (room - width - 2 * slack) / (n - 1)));
  const mid = (n - 1) / 2;
  cards.forEach((node, i) => {
    const off = i - mid;
    node.style.marginLeft = i ? `${(step - width).toFixed(1)}px` : "0px";
    node.style.setProperty("--rot", `${(off * angle).toFixed(2)}deg`);
    node.style.setProperty("--arc", `${(off * off * angle * 0.32).toFixed(1)}px`);
    node.style.zIndex = String(i + 1);
  });
}

// Move ``node`` from where ``from`` (a rectangle on screen) is to where it now is.
export function fly(node, from, delay = 0) {
  if (!moving() || !from || !node || !node.isConnected) return null;
  const to = node.getBoundingClientRect();
  if (!to.width || !from.width) return null;
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  const scale = Math.max(0.3, Math.min(2, from.width / to.width));
  node.classList.add("flying");
  const flight = node.animate(
    [{ transform: `translate(${dx.toFixed(1)}px, ${dy.toFixed(1)}px) scale(${scale.toFixed(2)})` }, { transform: "none" }],
    { duration: FLIGHT_MS, delay, easing: "cubic-bezier(.2,.8,.3,1)", fill: "backwards" });
  flight.finished.then(() => node.classList.remove("flying"), () => node.classList.remove("flying"));
  return flight;
}

// Deal ``nodes`` from ``from`` one after the other.
export function deal(nodes, from) {
  const gap = nodes.length > 1 ? Math.min(60, DEAL_MS / nodes.length) : 0;
  nodes.forEach((node, i) => fly(node, from, Math.round(i * gap)));
}

export function rect(node) { return node ? node.getBoundingClientRect() : null; }
