// The player table widget (widget-players.html): each player of an event with his
// points, results-based performance, rating change by FIDE's rules (with its K), his
// perceived rating over the event and his accuracy over the event, live, from the
// event's `standings` messages (docs/standings.md, "Player table").
// URL parameters: event=NAME (default: the first event by name), rows=N (the first N
// only), theme, bg, scale, show/hide (title, note). See docs/obs.md.
import { DASH, byTestId, el, param, rating, signed } from "./lib.js";
import { followStandings, perceivedText, pointsText } from "./standings.js";

/** A rating change as FIDE lists it, to one decimal: "+12.4", "−3.0"; none: a dash. */
export function changeText(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return DASH;
  return signed(x, 1);
}

/** An accuracy in percent, to one decimal: "87.3"; none: a dash. */
export function accuracyText(a) {
  if (!a || a.overall === null || a.overall === undefined || !Number.isFinite(a.overall)) return DASH;
  return a.overall.toFixed(1);
}

/** The accuracy's hover text: per phase and moves counted. */
function accuracyTitle(a) {
  if (!a) return "";
  const phases = ["opening", "middlegame", "endgame"]
    .filter((p) => a[p] !== null && a[p] !== undefined)
    .map((p) => `${p} ${a[p].toFixed(1)}`);
  return [...phases, `${a.moves} move${a.moves === 1 ? "" : "s"}`].join(" · ");
}

function playerCell(row) {
  const td = el("td", { class: "pl-player", testid: "player-name" });
  if (row.title) td.append(el("span", { class: "pl-title" }, row.title));
  td.append(el("span", { testid: "player-player" }, row.name));
  if (row.federation) td.append(el("span", { class: "pl-fed" }, row.federation));
  if (row.live) td.append(el("span", { class: "pl-live-dot", title: "playing now", testid: "player-live" }));
  return td;
}

function row(r) {
  const tr = el("tr", { testid: "player-row" });
  tr.dataset.key = r.key;
  tr.dataset.live = r.live ? "true" : "false";
  const perf = el("td", { class: "pl-num", testid: "player-performance" });
  perf.append(el("span", { testid: "player-performance-value" }, rating(r.performance)));
  const counted = r.rated_games ?? 0;
  if (r.performance !== null && r.performance !== undefined && counted < r.games) {
    // fewer games than he has played: say how many the performance is over
    perf.append(el("span", { class: "pl-k", testid: "player-performance-games" }, `${counted}g`));
  }
  if (r.rated_games) perf.title = `${r.rated_games} game${r.rated_games === 1 ? "" : "s"} against rated opponents`;
  const change = el("td", { class: "pl-num pl-change", testid: "player-change" });
  change.append(el("span", { testid: "player-change-value" }, changeText(r.rating_change)));
  if (r.k) change.append(el("span", { class: "pl-k", testid: "player-k" }, `K${r.k}`));
  if (Number.isFinite(r.rating_change)) {
    change.dataset.sign = r.rating_change > 0 ? "up" : r.rating_change < 0 ? "down" : "zero";
  }
  const p = perceivedText(r.perceived);
  const perceived = el("td", { class: "pl-num", testid: "player-perceived" }, p.text);
  if (p.title) perceived.title = p.title;
  const acc = el("td", { class: "pl-num pl-acc", testid: "player-accuracy" }, accuracyText(r.accuracy));
  const accTitle = accuracyTitle(r.accuracy);
  if (accTitle) acc.title = accTitle;
  tr.append(
    el("td", { class: "pl-rank", testid: "player-rank" }, r.rank),
    playerCell(r),
    el("td", { class: "pl-num pl-muted", testid: "player-rating" }, r.rating ?? DASH),
    el("td", { class: "pl-num pl-points", testid: "player-points" }, `${pointsText(r.points)}/${r.games}`),
    perf,
    change,
    perceived,
    acc,
  );
  return tr;
}

function render(root, msg) {
  byTestId(root, "players-event").textContent = msg.event;
  byTestId(root, "players-round").textContent = msg.round ? `after round ${msg.round}` : "";
  const limit = Number(param("rows", "0"));
  const rows = Number.isFinite(limit) && limit > 0 ? msg.rows.slice(0, limit) : msg.rows;
  byTestId(root, "players-body").replaceChildren(...rows.map(row));
  const counts = `${msg.finished} finished, ${msg.live} in progress`;
  byTestId(root, "players-note").textContent =
    `${counts}. Performance and rating change over finished games against rated opponents (how many, where fewer than the games played); accuracy over every game of the event.`;
  root.dataset.version = String(msg.version);
  root.dataset.event = msg.event;
}

if (typeof document !== "undefined" && document.body?.dataset.widgetPage === "players") {
  followStandings("players", render);
}
