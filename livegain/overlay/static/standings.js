// The standings widget (widget-standings.html): an event's standings, tie-breaks,
// each player's form and perceived rating over his games of the event, and his
// chance of first place with its Monte Carlo error, live.
// URL parameters: event=NAME (default: the first event by name), rows=N (the top N
// only), theme, bg, scale, show/hide (title, note). See docs/obs.md.
import {
  DASH,
  LiveConnection,
  applyPageParams,
  applyWidgetParams,
  byTestId,
  earlyText,
  el,
  param,
  rating,
  signed,
} from "./lib.js";

/** Points as chess writes them: 3½, ½, 0. */
export function pointsText(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return DASH;
  const whole = Math.floor(x);
  const half = x - whole >= 0.5;
  if (!half) return String(whole);
  return whole ? `${whole}½` : "½";
}

/** A tie-break value: up to two decimals, no trailing zeros; null: a dash. */
export function tiebreakText(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return DASH;
  return String(Number(v.toFixed(2)));
}

/** A chance with its Monte Carlo standard error, in percentage points: "34 % ±0.3". */
export function chanceText(p, se) {
  if (p === null || p === undefined || !Number.isFinite(p)) return { p: DASH, se: "" };
  const pct = p * 100;
  let text;
  if (p === 0 || p === 1) return { p: `${pct.toFixed(0)} %`, se: "" };
  if (pct < 0.1) text = "<0.1 %";
  else if (pct > 99.9) text = ">99.9 %";
  else text = `${pct.toFixed(pct >= 10 && pct <= 90 ? 0 : 1)} %`;
  const err = Number.isFinite(se) ? `±${(se * 100).toFixed(1)}` : "";
  return { p: text, se: err };
}

/**
 * A player's form over his games of the event (his official rating updated by his
 * moves): { text: "2731", diff: "+29" (form minus the official rating; "" without
 * one), early } ; too few moves: "too early"; none: a dash.
 */
export function formText(form, official) {
  if (!form || !Number.isFinite(form.rating)) return { text: DASH, diff: "", early: false };
  if (form.early) return { text: "too early", diff: "", early: true };
  const diff = Number.isFinite(official) && official > 0 ? signed(Math.round(form.rating) - official) : "";
  return { text: rating(form.rating), diff, early: false };
}

/**
 * A player's perceived rating over his games of the event: { text: "2704", title:
 * "95 % interval 2560–2850 · 84 moves · model NAME", label (the model's words when
 * his rating is outside the ratings it was validated on, else ""), early }.
 */
export function perceivedText(p) {
  if (!p || !Number.isFinite(p.rating)) return { text: DASH, title: "", label: "", early: false };
  const model = p.model ? ` · model ${p.model}` : "";
  if (p.early) return { text: "too early", title: `${earlyText(p.moves)}${model}`, label: "", early: true };
  const moves = `${p.moves} move${p.moves === 1 ? "" : "s"}`;
  return {
    text: rating(p.rating),
    title: `95 % interval ${rating(p.low)}–${rating(p.high)} · ${moves}${model}`,
    label: p.label ?? "",
    early: false,
  };
}

function formCell(row) {
  const f = formText(row.form, row.rating);
  const td = el("td", { class: "st-form", testid: "row-form" });
  td.dataset.value = f.early || !row.form ? "" : String(row.form.rating);
  td.append(el("span", { testid: "row-form-value" }, f.text));
  if (f.diff) {
    const d = el("span", { class: "st-form-diff", testid: "row-form-diff" }, `(${f.diff})`);
    d.dataset.sign = f.diff.startsWith("+") ? "up" : f.diff === "0" ? "zero" : "down";
    td.append(d);
  }
  if (row.form && !f.early) {
    td.title = `form: his rating ${row.rating ?? DASH} updated by his moves of the event (95 % interval ${rating(row.form.low)}–${rating(row.form.high)})`;
  }
  return td;
}

function perceivedCell(row) {
  const p = perceivedText(row.perceived);
  const td = el("td", { class: "st-perceived", testid: "row-perceived" });
  td.dataset.value = p.early || !row.perceived ? "" : String(row.perceived.rating);
  if (p.title) td.title = p.title;
  td.append(el("span", { testid: "row-perceived-value" }, p.text));
  if (p.label) td.append(el("span", { class: "st-label", testid: "row-perceived-label" }, p.label));
  return td;
}

function playerCell(row) {
  const td = el("td", { class: "st-player", testid: "row-name" });
  if (row.title) td.append(el("span", { class: "st-title" }, row.title));
  td.append(el("span", { class: "st-name", testid: "row-player" }, row.name));
  if (row.federation) td.append(el("span", { class: "st-fed" }, row.federation));
  if (row.live) td.append(el("span", { class: "st-live-dot", title: "playing now", testid: "row-live" }));
  return td;
}

/** Form and Perceived columns: when a row has either (the server has a calibrated model). */
function ratingColumns(msg) {
  return msg.rows.some((r) => r.form || r.perceived);
}

function headers(msg, odds) {
  const cells = [el("th", {}, "#"), el("th", { class: "st-player" }, "Player"), el("th", {}, "Rtg"), el("th", {}, "Pts")];
  for (const tb of msg.tiebreaks) cells.push(el("th", { testid: "head-tb" }, tb));
  if (ratingColumns(msg)) {
    cells.push(
      el("th", { testid: "head-form", title: "his rating updated by his moves of the event (difference to it)" }, "Form"),
      el("th", { testid: "head-perceived", title: "the rating of players whose moves look like his in the event (hover: 95 % interval)" }, "Perceived"),
    );
  }
  if (odds) {
    const toEnd = msg.top_k != null;
    const label = msg.format === "swiss" && msg.round && !toEnd ? `Lead after R${msg.round}` : "1st place";
    cells.push(el("th", { testid: "head-win", title: `chance, ± its Monte Carlo error (${msg.sims} simulations)` }, label));
    if (toEnd) {
      cells.push(el("th", { testid: "head-top", title: `chance of a place in the first ${msg.top_k}, ± its Monte Carlo error` }, `Top ${msg.top_k}`));
    }
  }
  return cells;
}

/** A Swiss simulated to its last round: the chance of a place in the first ``top_k``. */
function topCell(row) {
  const c = chanceText(row.top, row.top_se);
  const td = el("td", { class: "st-win st-top", testid: "row-top" });
  td.dataset.p = String(row.top);
  td.append(el("span", { testid: "row-top-chance" }, c.p));
  if (c.se) td.append(el("span", { class: "st-se" }, c.se));
  return td;
}

function render(root, msg) {
  const odds = msg.sims > 0;
  byTestId(root, "standings-event").textContent = msg.event;
  const round = msg.round ? (msg.rounds ? `round ${msg.round} of ${msg.rounds}` : `round ${msg.round}`) : "";
  byTestId(root, "standings-round").textContent = round;
  byTestId(root, "standings-head").replaceChildren(...headers(msg, odds));
  const limit = Number(param("rows", "0"));
  const rows = Number.isFinite(limit) && limit > 0 ? msg.rows.slice(0, limit) : msg.rows;
  const best = Math.max(0, ...rows.map((r) => r.win ?? 0));
  const withRatings = ratingColumns(msg);
  const body = byTestId(root, "standings-body");
  body.replaceChildren(
    ...rows.map((r) => {
      const tr = el("tr", { testid: "standings-row" });
      tr.dataset.key = r.key;
      tr.dataset.live = r.live ? "true" : "false";
      tr.append(
        el("td", { class: "st-rank", testid: "row-rank" }, r.rank),
        playerCell(r),
        el("td", { class: "st-tb", testid: "row-rating" }, r.rating ?? DASH),
        el("td", { class: "st-points", testid: "row-points" }, pointsText(r.points)),
      );
      for (const tb of msg.tiebreaks) {
        const td = el("td", { class: "st-tb", testid: "row-tb" }, tiebreakText(r.tiebreaks[tb]));
        td.dataset.tb = tb;
        tr.append(td);
      }
      if (withRatings) tr.append(formCell(r), perceivedCell(r));
      if (odds) {
        const c = chanceText(r.win, r.win_se);
        const td = el("td", { class: "st-win", testid: "row-win" });
        td.dataset.p = String(r.win);
        td.dataset.se = String(r.win_se);
        const width = best > 0 && r.win ? Math.max(2, Math.round((60 * r.win) / best)) : 0;
        if (width) td.append(el("span", { class: "st-bar", style: `width:${width}px` }));
        td.append(el("span", { testid: "row-chance" }, c.p));
        if (c.se) td.append(el("span", { class: "st-se", testid: "row-se" }, c.se));
        tr.append(td);
        if (msg.top_k != null) tr.append(topCell(r));
      }
      return tr;
    }),
  );
  const counts = `${msg.finished} finished, ${msg.live} in progress, ${msg.upcoming} to play`;
  const sims = odds ? ` · ${msg.sims.toLocaleString("en")} simulations` : "";
  byTestId(root, "standings-note").textContent = [msg.note, `${counts}${sims}.`].filter(Boolean).join(" ");
  root.dataset.version = String(msg.version);
  root.dataset.event = msg.event;
}

/**
 * Follow the ``standings`` messages of the page's event (``?event=``; without
 * it, the first event by name) and draw each with ``draw(root, msg)``; the
 * page's ``main`` says whether what it shows is live and fresh. ``what``
 * names the table in the waiting line ("standings", "players").
 */
export function followStandings(what, draw) {
  applyPageParams({ bg: "transparent" });
  applyWidgetParams();
  const root = document.querySelector("main");
  const wanted = param("event");
  const tables = new Map();
  let connState = "connecting";
  let fresh = false;

  const freshness = () => {
    root.dataset.fresh = connState === "live" && fresh ? "true" : "false";
  };
  const show = () => {
    const name = wanted ?? [...tables.keys()].sort()[0];
    const msg = name === undefined ? null : tables.get(name);
    const waiting = byTestId(root, "waiting");
    if (!msg) {
      waiting.hidden = false;
      waiting.textContent = wanted ? `Waiting for the ${what} of ${wanted}…` : `Waiting for ${what}…`;
      return;
    }
    waiting.hidden = true;
    draw(root, msg);
  };

  const conn = new LiveConnection({
    onState(s) {
      connState = s;
      if (s !== "live") fresh = false;
      freshness();
    },
    onOpen() {
      fresh = false;
      freshness();
      conn.send({ type: "subscribe_standings", events: wanted ? [wanted] : "*" });
    },
    standings(msg) {
      tables.set(msg.event, msg);
      if (!wanted || msg.event === wanted) {
        fresh = true;
        freshness();
      }
      show();
    },
    error(msg) {
      console.warn("livegain server error:", msg.message);
    },
  });
  show();
  conn.start();
}

if (typeof document !== "undefined" && document.body?.dataset.widgetPage === "standings") {
  followStandings("standings", render);
}
