// The knockout widget (docs/standings.md, "Knockouts"), live from the event's
// `standings` messages (their `knockout` part):
// - the current round's mini-matches: the two players, the stage being played,
//   the score of each stage reached, a game in progress marked, and each
//   player's chance of going through (a bar split between them);
// - the players still in, with their exact chance of winning the event.
// URL parameters: event=NAME (default: the first event by name), rows=N (the
// event-win list: the top N only), theme, bg, scale, show/hide (title, note).
// See docs/obs.md.
import { DASH, byTestId, el, param } from "./lib.js";
import { followStandings, pointsText } from "./standings.js";
import { pct } from "./teams.js";

/** The score of each stage reached: "classical 1–1 · rapid ½–½". */
function stagesText(m) {
  return m.stages.map((s) => `${s.name} ${pointsText(s.score_a)}–${pointsText(s.score_b)}`).join(" · ");
}

function matchCard(m) {
  const card = el("div", { class: "bk-match", testid: "bk-match" });
  card.dataset.live = m.live ? "true" : "false";
  card.dataset.decided = m.winner === null ? "false" : "true";
  const side = (name, p, testid) => {
    const row = el("div", { class: "bk-side", testid });
    if (m.winner !== null) row.classList.add(m.winner === name ? "bk-through" : "bk-out");
    row.append(el("span", { class: "bk-name" }, name), el("span", { class: "bk-pct", testid: `${testid}-pct` }, pct(p)));
    return row;
  };
  const bar = el("div", { class: "bk-bar", testid: "bk-bar", title: `${m.a} ${pct(m.through_a)}, ${m.b} ${pct(m.through_b)}` });
  bar.append(
    el("span", { class: "bk-bar-a", style: `flex-grow: ${Math.max(0, m.through_a)}` }),
    el("span", { class: "bk-bar-b", style: `flex-grow: ${Math.max(0, m.through_b)}` }),
  );
  const stage = el("div", { class: "bk-stage", testid: "bk-stage" }, m.winner === null ? m.stage : `decided: ${m.stage}`);
  if (m.live) stage.append(el("span", { class: "bk-live-dot", title: "a game in progress", testid: "bk-live" }));
  card.append(
    side(m.a, m.through_a, "bk-a"),
    bar,
    side(m.b, m.through_b, "bk-b"),
    stage,
    el("div", { class: "bk-score", testid: "bk-score" }, stagesText(m)),
  );
  return card;
}

function winRow(r) {
  const tr = el("tr", { testid: "bk-row" });
  tr.dataset.key = r.key;
  const bar = el("div", { class: "bk-winbar" });
  bar.append(el("span", { style: `width: ${Math.max(0, Math.min(1, r.win)) * 100}%` }));
  const cell = el("td", { class: "bk-bar-cell" });
  cell.append(bar);
  tr.append(
    el("td", { class: "bk-player", testid: "bk-player" }, r.name),
    el("td", { class: "bk-num bk-muted", testid: "bk-rating" }, r.rating ?? DASH),
    el("td", { class: "bk-num bk-muted", testid: "bk-next", title: "chance of reaching the next round" }, r.reach.length ? pct(r.reach[0].p) : DASH),
    el("td", { class: "bk-num bk-strong", testid: "bk-win" }, pct(r.win)),
    cell,
  );
  return tr;
}

function render(root, msg) {
  byTestId(root, "bracket-event").textContent = msg.event;
  const ko = msg.knockout;
  if (!ko) {
    byTestId(root, "bracket-matches").replaceChildren();
    byTestId(root, "bracket-body").replaceChildren();
    byTestId(root, "bracket-note").textContent = "Not a knockout: no bracket.";
    return;
  }
  byTestId(root, "bracket-round").textContent = ko.round ? `round ${ko.round} of ${ko.rounds.length}` : "";
  byTestId(root, "bracket-matches").replaceChildren(...ko.matches.map(matchCard));
  const limit = Number(param("rows", "0"));
  const rows = Number.isFinite(limit) && limit > 0 ? ko.bracket.slice(0, limit) : ko.bracket;
  byTestId(root, "bracket-body").replaceChildren(...rows.map(winRow));
  byTestId(root, "bracket-note").textContent =
    `${ko.bracket.length} player${ko.bracket.length === 1 ? "" : "s"} left. Chances exact: games in progress from their shown win/draw/loss, the rest from the ratings; bracket order ${ko.order_why}.`;
  root.dataset.version = String(msg.version);
  root.dataset.event = msg.event;
}

if (typeof document !== "undefined" && document.body?.dataset.widgetPage === "bracket") {
  followStandings("knockout", render);
}
