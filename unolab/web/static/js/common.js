// What every tab of the page uses: building elements, talking to the server, the error line
// in the header, the tabs themselves.

export const $ = (sel) => document.querySelector(sel);
export const $$ = (sel) => [...document.querySelectorAll(sel)];

// What the server offers (GET /api/options: presets, switches, agents, limits), once loaded.
export let options = null;
// The bots' moves are being shown one by one (the page stays busy meanwhile).
export let stepping = false;
export function setStepping(on) { stepping = on; }

export function el(tag, attrs = {}, ...children) {
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
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- talking to the server ---------------------------------------------------------

export function showError(message) {
  $("#error").textContent = message || "";
  $("#error-box").classList.toggle("hidden", !message);
}
$("#error-close").addEventListener("click", () => showError(""));

// Seeds may exceed what a JavaScript number holds exactly (2**53): any "seed" the server
// sends as a bare number is read as its digits before JSON.parse can round it.
function parseJson(text) {
  return JSON.parse(text.replace(/("seed"\s*:\s*)(-?\d+)(?=\s*[,}\]])/g, '$1"$2"'));
}

// The HTTP status of the last answer (0: the server could not be reached).
export let lastStatus = 0;
// Every call answers the data, or null after showing why in the header: a refusal (a 4xx
// with one line) is a message for the player, never an uncaught error in the console.
// ``headers`` adds to the request's (a seat's token at a table for several people).
export async function api(method, path, body, headers = {}) {
  document.body.dataset.busy = "1";
  lastStatus = 0;
  try {
    const init = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    const response = await fetch(path, init);
    lastStatus = response.status;
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
export function safely(handler) {
  return (...args) => Promise.resolve().then(() => handler(...args)).catch((err) => showError(String(err && err.message || err)));
}
export function on(sel, event, handler) { $(sel).addEventListener(event, safely(handler)); }
export function segments(id) { return String(id).split("/").map(encodeURIComponent).join("/"); }
export async function loadOptions() {
  options = await api("GET", "/api/options");
  return options;
}
// Whether a key press is meant for the page: no modifier held, nothing typed into a field,
// no dialog open.
export function pageKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return false;
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return false;
  return !$("#confirm").open;
}

// ---- tabs ----------------------------------------------------------------------------

// What a tab loads each time it is shown (the Replay tab its sources, the Lab tab its runs).
const onShow = {};
export function whenShown(view, load) { onShow[view] = load; }
export function show(view) {
  for (const id of ["setup", "table-view", "replay", "lab"]) $("#" + id).classList.toggle("hidden", id !== view);
  $("#tab-play").classList.toggle("active", view === "setup" || view === "table-view");
  $("#tab-replay").classList.toggle("active", view === "replay");
  $("#tab-lab").classList.toggle("active", view === "lab");
  showError("");
  if (onShow[view]) onShow[view]();
}
