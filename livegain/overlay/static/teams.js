// The team widgets of a team event (docs/standings.md, "Team events"), live from the
// event's `standings` messages (their `teams` part):
// - widget-team-standings.html: the teams by rank, match points, game points,
//   won/drawn/lost and the team tie-breaks;
// - widget-team-match.html: one match of the latest round board by board, each
//   board's result or its chances, and the match's chances for each team.
// URL parameters: event=NAME (default: the first event by name), team=NAME (the
// match widget: that team's match; default: the first match), rows=N (the standings:
// the top N only), theme, bg, scale, show/hide (title, note). See docs/obs.md.
import { DASH, byTestId, el, param } from "./lib.js";
import { chanceText, followStandings, pointsText, tiebreakText } from "./standings.js";

/** A probability as a whole percentage: "62 %"; none: a dash. */
export function pct(p) {
  if (p === null || p === undefined || !Number.isFinite(p)) return DASH;
  return `${Math.round(p * 100)} %`;
}

/**
 * A team's chance (first place, or the top k) with its Monte Carlo error, as the
 * players' standings show it ("34 % ±0.3"); ``best``: the largest chance of the
 * column, for a bar beside it (none: no bar).
 */
function chanceCell(p, se, testid, best) {
  const c = chanceText(p, se);
  const td = el("td", { class: "tm-num tm-chance", testid });
  td.dataset.p = String(p);
  const width = best > 0 && p ? Math.max(2, Math.round((60 * p) / best)) : 0;
  if (width) td.append(el("span", { class: "tm-chance-bar", style: `width:${width}px` }));
  td.append(el("span", { testid: `${testid}-chance` }, c.p));
  if (c.se) td.append(el("span", { class: "tm-se" }, c.se));
  return td;
}

function standingsRow(r, names, odds) {
  const tr = el("tr", { testid: "team-row" });
  tr.dataset.team = r.team;
  tr.append(
    el("td", { class: "tm-rank", testid: "team-rank" }, r.rank),
    el("td", { class: "tm-team", testid: "team-name" }, r.team),
    el("td", { class: "tm-num tm-strong", testid: "team-mp" }, pointsText(r.match_points)),
    el("td", { class: "tm-num", testid: "team-gp" }, pointsText(r.game_points)),
    el("td", { class: "tm-num tm-muted", testid: "team-record" }, `${r.won}-${r.drawn}-${r.lost}`),
    ...names.map((n) => el("td", { class: "tm-num tm-muted", testid: `team-tb-${n}` }, tiebreakText(r.tiebreaks[n]))),
  );
  if (odds) tr.append(chanceCell(r.win, r.win_se, "team-win", odds.best));
  if (odds && odds.top) tr.append(chanceCell(r.top, r.top_se, "team-top", 0));
  return tr;
}

function renderStandings(root, msg) {
  const teams = msg.teams;
  byTestId(root, "teams-event").textContent = msg.event;
  if (!teams) {
    byTestId(root, "teams-body").replaceChildren();
    byTestId(root, "teams-note").textContent = "Not a team event: no team standings.";
    return;
  }
  const of = teams.rounds ? ` of ${teams.rounds}` : "";
  byTestId(root, "teams-round").textContent = teams.round ? `round ${teams.round}${of}` : "";
  // the columns already shown (match and game points) are not repeated as tie-breaks
  const extra = teams.tiebreaks.filter((n) => n !== "MP" && n !== "GP");
  const head = byTestId(root, "teams-head");
  head.replaceChildren(
    el("th", {}, "#"),
    el("th", { class: "tm-team" }, "Team"),
    el("th", { title: "match points" }, "MP"),
    el("th", { title: "game points" }, "GP"),
    el("th", { title: "matches won, drawn, lost" }, "W-D-L"),
    ...extra.map((n) => el("th", {}, n)),
  );
  const limit = Number(param("rows", "0"));
  const rows = Number.isFinite(limit) && limit > 0 ? teams.rows.slice(0, limit) : teams.rows;
  // the event's chances, when the server simulates every match left: "1st" with a
  // bar (the leader's the longest), "Top k" beside it when k > 1
  const odds =
    teams.sims > 0
      ? { top: teams.top_k != null && teams.top_k > 1, best: Math.max(0, ...rows.map((r) => r.win ?? 0)) }
      : null;
  if (odds) {
    head.append(el("th", { testid: "teams-head-win", title: `chance of winning the event, ± its Monte Carlo error (${teams.sims} simulations)` }, "1st"));
    if (odds.top) head.append(el("th", { testid: "teams-head-top", title: `chance of a place in the first ${teams.top_k}, ± its Monte Carlo error` }, `Top ${teams.top_k}`));
  }
  byTestId(root, "teams-body").replaceChildren(...rows.map((r) => standingsRow(r, extra, odds)));
  const order = `Finished matches; ${teams.primary === "MP" ? "match points" : "game points"} first, then ${teams.tiebreaks.join(", ")}.`;
  const chances = odds ? ` Chances: every match left simulated (${teams.sims.toLocaleString("en")} simulations).` : "";
  byTestId(root, "teams-note").textContent = [order + chances, teams.note].filter(Boolean).join(" ");
  root.dataset.version = String(msg.version);
  root.dataset.event = msg.event;
}

/** A board's line: its players (team a's marked), and its result or its chances. */
function boardRow(b) {
  const tr = el("tr", { testid: "match-board" });
  tr.dataset.live = b.live ? "true" : "false";
  const white = el("td", { class: "tm-player", testid: "board-white" }, b.white);
  const black = el("td", { class: "tm-player", testid: "board-black" }, b.black);
  (b.a_white ? white : black).classList.add("tm-a");
  const outcome = el("td", { class: "tm-outcome", testid: "board-outcome" });
  if (b.wdl === null) {
    outcome.append(el("span", { class: "tm-result", testid: "board-result" }, b.result.replace("1/2", "½")));
  } else {
    const [w, d, l] = b.wdl.map((x) => x / 1000);
    const bar = el("div", { class: "tm-bar", testid: "board-bar", title: `White ${pct(w)}, draw ${pct(d)}, Black ${pct(l)}` });
    for (const [cls, x] of [["w", w], ["d", d], ["l", l]]) {
      bar.append(el("span", { class: `tm-bar-${cls}`, style: `flex-grow: ${Math.max(0, x)}` }));
    }
    outcome.append(bar, el("span", { class: "tm-odds", testid: "board-odds" }, `${pct(w)} · ${pct(d)} · ${pct(l)}`));
  }
  if (b.live) white.append(el("span", { class: "tm-live-dot", title: "playing now", testid: "board-live" }));
  tr.append(el("td", { class: "tm-rank", testid: "board-number" }, b.board ?? DASH), white, outcome, black);
  return tr;
}

function renderMatch(root, msg) {
  byTestId(root, "match-event").textContent = msg.event;
  const teams = msg.teams;
  const wanted = param("team");
  const match = teams?.matches.find((m) => !wanted || m.a === wanted || m.b === wanted);
  if (!match) {
    byTestId(root, "match-body").replaceChildren();
    byTestId(root, "match-score").textContent = teams ? `No match of ${wanted} in round ${teams.round}` : "Not a team event";
    return;
  }
  byTestId(root, "match-round").textContent = `round ${match.round}`;
  byTestId(root, "match-a").textContent = match.a;
  byTestId(root, "match-b").textContent = match.b;
  byTestId(root, "match-score").textContent = `${pointsText(match.score_a)} – ${pointsText(match.score_b)}`;
  byTestId(root, "match-win").textContent = pct(match.win);
  byTestId(root, "match-draw").textContent = pct(match.draw);
  byTestId(root, "match-loss").textContent = pct(match.loss);
  byTestId(root, "match-body").replaceChildren(...match.boards.map(boardRow));
  byTestId(root, "match-note").textContent =
    `${match.boards_left} board${match.boards_left === 1 ? "" : "s"} to finish; expected ${match.expected_a.toFixed(1)} for ${match.a}. Chances: each board's shown win/draw/loss (games not started: from the ratings).`;
  root.dataset.version = String(msg.version);
  root.dataset.event = msg.event;
}

if (typeof document !== "undefined" && document.body?.dataset.widgetPage === "team-standings") {
  followStandings("team standings", renderStandings);
}
if (typeof document !== "undefined" && document.body?.dataset.widgetPage === "team-match") {
  followStandings("team match", renderMatch);
}
