// The Lab tab: the tournament and training runs under the runs folder (a leaderboard with
// its plots, a learning curve) and the shipped agents, read only.

import { $, $$, api, el, on, safely, segments, show, whenShown } from "./common.js";
import { describeRules } from "./setup.js";

on("#tab-lab", "click", () => show("lab"));
whenShown("lab", () => loadLab());

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
  const humans = await api("GET", "/api/lab/humans");
  if (runs) drawRuns(runs);
  if (agents) drawAgents(agents);
  if (humans) drawHumans(humans);
}
// People against each agent: the finished matches kept as data (serve --collect-human-games).
function drawHumans(rows) {
  const box = $("#lab-humans");
  if (!rows.length) {
    box.replaceChildren(el("p", { class: "about" }, "No finished games kept as data yet (uno-lab serve --collect-human-games asks each player)."));
    return;
  }
  const head = el("thead", {}, el("tr", {}, ...["agent", "games", "people's win rate", "95% interval"].map((h) => el("th", {}, h))));
  box.replaceChildren(el("table", { class: "strength" }, head, el("tbody", {}, ...rows.map((r) => el("tr", { "data-agent": r.agent },
    el("td", {}, r.agent), el("td", {}, num(r.games)), el("td", {}, pct(r.win_rate)), el("td", {}, `[${pct(r.low)}, ${pct(r.high)}]`))))));
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
  const models = board.filter((r) => r.telemetry);
  const secs = (x) => (typeof x === "number" ? `${x.toFixed(2)} s` : "\u2013");
  const modelRows = models.map((r) => {
    const m = r.telemetry;
    return el("tr", {}, el("td", {}, r.name), ...[m.decisions, m.invalid, m.retries, m.fallbacks, m.timeouts,
      m.transport_retries].map((x) => el("td", {}, num(x))),
    el("td", {}, secs(m.latency_mean_s)), el("td", {}, secs(m.latency_p90_s)), el("td", {}, `${num(m.tokens_in)} / ${num(m.tokens_out)}`));
  });
  const telemetry = el("table", { class: "leaderboard telemetry" },
    el("thead", {}, el("tr", {}, ...["language model", "decisions", "invalid", "retries", "fallbacks", "timeouts",
      "transport retries", "mean latency", "p90 latency", "tokens in / out"].map((h) => el("th", {}, h)))),
    el("tbody", {}, ...modelRows));
  const plots = (t.plots || []).map((name) => el("figure", {},
    el("img", { src: `/api/lab/tournaments/${segments(id)}/plots/${encodeURIComponent(name)}`, alt: `${t.name}: ${name}`, loading: "lazy" }),
    el("figcaption", {}, name)));
  detail(el("h3", {}, `Tournament: ${t.name || t.id}`),
    el("p", { class: "about" }, `${t.format || ""} \u00B7 ${t.num_players} players \u00B7 ${describeRules(t.rules)} \u00B7 ${num(t.games)} games`),
    board.length ? table : el("p", { class: "about" }, "No leaderboard yet."),
    models.length ? el("h4", {}, "Language models: their answers") : null,
    models.length ? el("div", { class: "scroll" }, telemetry) : null,
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
// How an agent was made: the steps of its recipe, numbered; the command of each step as
// code that wraps where it must (a card never scrolls sideways).
function recipe(text) {
  if (!text) return null;
  const steps = (typeof text === "string" ? text : JSON.stringify(text)).split("\n").map((line) => line.replace(/^\d+\.\s*/, "")).filter(Boolean);
  return el("div", {}, el("p", { class: "about" }, "How it was trained:"),
    el("ol", { class: "recipe" }, ...steps.map((step) => {
      const m = /^(uno-lab [^(]*?)\s*(\(.*)?$/.exec(step);
      return el("li", {}, ...(m ? [el("code", {}, m[1]), m[2] ? ` ${m[2]}` : null] : [step]));
    })));
}
function drawAgents(agents) {
  const box = $("#lab-agents");
  if (!agents.length) { box.replaceChildren(el("p", { class: "about" }, "No shipped agents.")); return; }
  box.replaceChildren(...agents.map((a) => {
    const measured = a.strength || [];
    const games = new Set(measured.map((s) => s.games));
    const strength = measured.map((s) => el("tr", {}, el("td", {}, s.opponent),
      el("td", {}, pct(s.win_rate)), el("td", {}, `[${pct(s.ci_low)}, ${pct(s.ci_high)}]`,
        games.size > 1 ? ` \u00B7 ${num(s.games)} games` : null)));
    const head = el("thead", {}, el("tr", {}, ...["against", "wins", "95% interval"].map((h) => el("th", {}, h))));
    return el("div", { class: "agent-card", "data-agent": a.name },
      el("h4", {}, a.name),
      a.title && a.title !== a.name ? el("p", { class: "subtitle" }, a.title) : null,
      el("p", { class: "about" }, [`${a.num_players} players`, describeRules(a.rules),
        typeof a.training_steps === "number" ? `${num(a.training_steps)} training steps` : null,
        `observation v${a.observation_version ?? "?"}`].filter(Boolean).join(" \u00B7 ")),
      recipe(a.recipe),
      strength.length ? el("table", { class: "strength" },
        games.size === 1 ? el("caption", {}, `Strength, ${num([...games][0])} games each`) : el("caption", {}, "Strength"),
        head, el("tbody", {}, ...strength)) : el("p", { class: "about" }, "Strength not measured."));
  }));
}

