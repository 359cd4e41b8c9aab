// Board overlay: one board, live. See docs/obs.md for the URL parameters.
import { boardFlipped, checkSquare, renderBoard } from "./chessboard.js";
import { renderEvalBar } from "./evalbar.js";
import { drawEvalGraph } from "./evalgraph.js";
import { drawTimeStrip } from "./timestrip.js";
import { BoardFollower } from "./follow.js";
import {
  DASH,
  HEADLINE_LABELS,
  RATING_LABELS,
  applyPageParams,
  applyWidgetParams,
  byTestId,
  clockText,
  earlyText,
  gainSeverity,
  gainText,
  headlineKind,
  headlineRating,
  moveNumber,
  param,
  params,
  percent,
  rating,
  ratingMode,
  scaleText,
  setText,
  shownRating,
  signed,
  versusOfficial,
} from "./lib.js";
import { drawSpark, drawTrace } from "./trace.js";

const LAYOUTS = {
  full: null, // every widget
  compact: "header,status,players,perceived,clocks,accuracy,eval,wdl,trace,lastmove,h2h,odds",
  "lower-third": "header,status,players,perceived,clocks,accuracy,eval,wdl,lastmove,h2h",
  corner: "players,perceived,eval,board",
};

const wanted = param("layout", "full");
const layout = Object.prototype.hasOwnProperty.call(LAYOUTS, wanted) ? wanted : "full";
document.body.dataset.layout = layout;
applyPageParams();
if (!params.has("show") && LAYOUTS[layout]) params.set("show", LAYOUTS[layout]);
applyWidgetParams();

const root = document.querySelector("main");
// which rating is shown: the calibrated estimates, or the paper's Algorithm 4 (rating=algorithm4)
const mode = ratingMode();
root.dataset.rating = mode;
for (const color of ["white", "black"]) byTestId(root, `${color}-perceived-box`).dataset.kind = mode;
setText(root, "trace-title", RATING_LABELS[mode].chart);
byTestId(root, "trace").title = RATING_LABELS[mode].tip;
const bigLoss = Math.abs(Number(param("bigloss", "100"))) || 100;
// the board: flipped with flip=1 or side=black (Black at the bottom)
const flip = boardFlipped();
document.body.dataset.flip = flip ? "true" : "false";
// beside the board (corner layout) the eval bar stands up, White's side toward White
const bar = byTestId(root, "eval-bar");
bar.classList.toggle("vertical", layout === "corner");
bar.classList.toggle("flipped", flip);
let state = null;

const follower = new BoardFollower({
  root,
  boardId: param("board"),
  render(s) {
    state = s;
    render();
  },
  freshness(connState, fresh, s) {
    state = s;
    renderFreshness(connState, fresh);
  },
  waiting: showWaiting,
});

function showWaiting(text) {
  const w = byTestId(root, "waiting");
  w.hidden = !text;
  w.textContent = text || "";
}

function renderFreshness(connState, fresh) {
  const status = byTestId(root, "status");
  let s;
  let text;
  if (connState === "reconnecting") [s, text] = ["reconnecting", "RECONNECTING…"];
  else if (connState === "connecting") [s, text] = ["connecting", "CONNECTING…"];
  else if (!fresh) [s, text] = ["syncing", "SYNCING…"];
  else if (state && state.status === "finished") [s, text] = ["finished", "FINAL"];
  else [s, text] = ["live", "LIVE"];
  status.dataset.state = s;
  status.textContent = text;
}

function renderPlayer(color) {
  const p = state[color];
  setText(root, `${color}-name`, p.name);
  setText(root, `${color}-title`, p.title || "");
  setText(root, `${color}-fed`, p.federation || "");
  setText(root, `${color}-rating`, p.rating ?? DASH);
  const card = byTestId(root, `${color}-card`);
  card.dataset.hasTitle = p.title ? "true" : "false";
  renderHeadline(color);
  const spark = byTestId(root, `${color}-spark`);
  if (spark.offsetParent !== null) {
    drawSpark(spark, state[`${color}_trace`], p.rating, mode, headlineKind(state, color, mode));
  }
  // accuracy in this game (lichess's method, docs/maths.md): shown once known
  const acc = state[`${color}_accuracy`];
  const accBox = byTestId(root, `${color}-accuracy-box`);
  const known = Boolean(acc) && Number.isFinite(acc.overall);
  accBox.dataset.state = known ? "known" : "none";
  setText(root, `${color}-accuracy`, known ? accuracyText(acc.overall) : DASH);
  accBox.title = known ? accuracyTitle(acc) : "";
  const clocks = state.clocks || {};
  const clock = byTestId(root, `${color}-clock`);
  clock.textContent = clocks[color] === null || clocks[color] === undefined ? "" : clockText(clocks[color]);
  clock.dataset.running = clocks.running === color ? "true" : "false";
  // time trouble (docs/maths.md, "Time use"): the clock is marked
  clock.dataset.trouble = clocks[`${color}_time_trouble`] ? "true" : "false";
}

/**
 * A player's large number (docs/validity.md, "The headline number"): his form
 * when he has an official rating, labelled as such with its difference to that
 * rating, and the moves-alone estimate with its 95 % interval beside it in
 * smaller type; the moves-alone estimate with its interval for a player without
 * a rating; Algorithm 4 with rating=algorithm4.
 */
function renderHeadline(color) {
  const head = headlineRating(state, color, mode);
  const box = byTestId(root, `${color}-perceived-box`);
  // state: "estimate" (a number), "early" (too few moves: no number) or "none"
  box.dataset.state = head.state;
  box.dataset.headline = head.kind;
  box.title = HEADLINE_LABELS[head.kind].tip;
  setText(root, `${color}-headline-label`, HEADLINE_LABELS[head.kind].title);
  const shown = head.state === "estimate";
  const value = byTestId(root, `${color}-headline`);
  value.dataset.kind = head.kind;
  value.dataset.value = shown ? String(head.rating) : "";
  value.dataset.bounded = head.bound ? "true" : "false";
  value.dataset.early = head.state === "early" ? "true" : "false";
  setText(root, `${color}-headline-bound`, head.bound);
  setText(root, `${color}-headline`, shown ? rating(head.rating) : head.state === "early" ? "too early" : DASH);
  setText(root, `${color}-headline-low`, shown ? rating(head.low) : DASH);
  setText(root, `${color}-headline-high`, shown ? rating(head.high) : DASH);
  setText(root, `${color}-headline-moves`, head.state === "early" ? earlyText(head.moves) : "");
  // beside the number: the model's label of the player's rating (outside the ratings it
  // was validated on: extrapolated, not validated on FIDE games)
  setText(root, `${color}-headline-note`, shown && head.label ? head.label : "");
  // vs FIDE: his form (official rating updated by this game's moves) minus his rating
  const d = versusOfficial(state, color, mode);
  const diff = byTestId(root, `${color}-headline-diff`);
  if (d !== null) {
    diff.textContent = `${signed(d)} vs FIDE`;
    diff.dataset.sign = Math.round(d) > 0 ? "up" : Math.round(d) < 0 ? "down" : "zero";
    diff.dataset.value = String(d);
  } else {
    diff.textContent = "";
    diff.dataset.sign = "";
    diff.dataset.value = "";
  }
  // the moves alone, beside a form: the point and its 95 % interval, in smaller type
  const per = shownRating(state, color, mode);
  const alone = per.state === "estimate" && head.kind === "form";
  const perValue = byTestId(root, `${color}-perceived`);
  perValue.dataset.value = alone ? String(per.rating) : "";
  byTestId(root, `${color}-moves-alone`).dataset.shown = alone ? "true" : "false";
  setText(root, `${color}-perceived`, alone ? rating(per.rating) : DASH);
  setText(root, `${color}-perceived-low`, alone ? rating(per.low) : DASH);
  setText(root, `${color}-perceived-high`, alone ? rating(per.high) : DASH);
}

/** An accuracy in percent: "87.4 %". */
function accuracyText(x) {
  return `${x.toFixed(1)} %`;
}

/** The accuracy's hover text: by phase, and the moves counted. */
function accuracyTitle(acc) {
  const phases = ["opening", "middlegame", "endgame"]
    .filter((p) => Number.isFinite(acc[p]))
    .map((p) => `${p} ${acc[p].toFixed(1)} %`);
  const moves = `${acc.moves} move${acc.moves === 1 ? "" : "s"}`;
  return `accuracy in this game (lichess's method): ${[...phases, moves].join(" · ")}`;
}

/** What the perceived ratings are, for the footer: the audience can tell which number it sees. */
function ratingSource() {
  if (mode === "algorithm4") return "ratings: the paper's Algorithm 4 (not calibrated)";
  const p = state.white_perceived || state.black_perceived || {};
  const scale = scaleText(p.scale);
  const what = `perceived rating calibrated on rated games${scale ? `, ${scale}` : ""}`;
  const model = p.model ? `${what} (model ${p.model})` : what;
  return `large number: form where rated, else the moves alone · ${model}`;
}

/**
 * The chart's key, by what each player's large number is: [short words for the
 * legend (cut where the names leave no room), the whole key for its tooltip].
 */
function traceNote() {
  if (mode === "algorithm4") {
    const key = "· band: 95% interval · dotted: clamped · dashed: FIDE rating";
    return [key, key];
  }
  const kinds = new Set(["white", "black"].map((c) => headlineKind(state, c, mode)));
  if (!kinds.has("form")) {
    const key = "· line: moves alone · band: 95% interval · dashed: FIDE rating";
    return [key, key];
  }
  const unrated = kinds.has("perceived") ? " (unrated: moves alone)" : "";
  return [
    `· line: form${unrated} · dotted: moves alone`,
    `line: form (FIDE rating updated by the moves)${unrated} · dotted line and band: ` +
      "the moves alone and their 95% interval · dashed: FIDE rating",
  ];
}

function renderH2h() {
  const h = state.head_to_head;
  setText(root, "h2h-white", h ? h.white_expected.toFixed(2) : DASH);
  setText(root, "h2h-black", h ? h.black_expected.toFixed(2) : DASH);
  byTestId(root, "h2h-white").dataset.value = h ? String(h.white_expected) : "";
  byTestId(root, "h2h-black").dataset.value = h ? String(h.black_expected) : "";
  byTestId(root, "h2h-fill").style.width = `${((h ? h.white_expected : 0.5) * 100).toFixed(1)}%`;
  const diff = byTestId(root, "h2h-diff");
  diff.dataset.value = h ? String(h.difference) : "";
  if (!h) diff.textContent = DASH;
  else if (Math.round(h.difference) === 0) diff.textContent = "Level: 0 Elo";
  else {
    const leader = h.difference > 0 ? "White" : "Black";
    diff.textContent = `${leader} +${Math.round(Math.abs(h.difference))} Elo`;
  }
  setText(root, "h2h-interval", h ? `(95% ${signed(h.low)} … ${signed(h.high)} for White)` : "");
}

function renderLastMove() {
  const box = byTestId(root, "last-move-box");
  const last = state.moves.length ? state.moves[state.moves.length - 1] : null;
  if (!last) {
    setText(root, "last-move", DASH);
    setText(root, "last-move-gain", "");
    setText(root, "last-move-mark", "");
    setText(root, "last-move-player", "");
    setText(root, "last-move-best", "");
    box.dataset.severity = "";
    return;
  }
  setText(root, "last-move", `${moveNumber(last.ply)} ${last.san}`);
  const sev = gainSeverity(last.gain, bigLoss);
  box.dataset.severity = sev;
  byTestId(root, "last-move").dataset.ply = String(last.ply);
  const gain = byTestId(root, "last-move-gain");
  gain.textContent = last.gain === null || last.gain === undefined ? "evaluating…" : `gain ${gainText(last.gain)}`;
  gain.dataset.value = last.gain === null || last.gain === undefined ? "" : String(last.gain);
  setText(root, "last-move-mark", sev === "big-loss" ? "??" : sev === "loss" ? "?" : "");
  setText(root, "last-move-player", state[last.color].name);
  const best = last.eval && last.eval.best;
  setText(root, "last-move-best", best && sev ? `engine preferred ${best}` : "");
}

function renderMoves() {
  const list = byTestId(root, "moves");
  let recent = state.moves.slice(-40);
  // rows pair a move number's White and Black moves: start on a White move
  if (recent.length && recent[0].color === "black" && recent.length < state.moves.length) {
    recent = recent.slice(1);
  }
  list.replaceChildren();
  for (const m of recent) {
    const li = document.createElement("li");
    li.dataset.color = m.color;
    li.dataset.severity = gainSeverity(m.gain, bigLoss);
    li.dataset.testid = "move";
    li.dataset.ply = String(m.ply);
    const num = document.createElement("span");
    num.className = "num";
    num.textContent = moveNumber(m.ply);
    const san = document.createElement("span");
    san.className = "san";
    san.textContent = m.san;
    const g = document.createElement("span");
    g.className = "gain";
    g.textContent = gainText(m.gain);
    li.append(num, san, g);
    list.append(li);
  }
  // keep the newest moves: drop whole rows from the top while the list overflows
  let guard = 40;
  while (guard-- > 0 && list.children.length > 2 && list.scrollHeight > list.clientHeight + 1) {
    list.firstElementChild.remove();
    list.firstElementChild.remove();
  }
}

function renderOdds() {
  const box = byTestId(root, "odds");
  const m = state.match;
  box.dataset.empty = m ? "false" : "true";
  if (!m) return;
  setText(root, "odds-a", percent(m.a_wins));
  setText(root, "odds-draw", percent(m.draw));
  setText(root, "odds-b", percent(m.b_wins));
  setText(root, "odds-a-name", m.a);
  setText(root, "odds-b-name", m.b);
  setText(root, "odds-score", `${m.score_a}–${m.score_b}, ${m.games_left} left`);
}

function render() {
  document.title = `${state.white.name} – ${state.black.name} · livegain`;
  setText(root, "event", state.tournament || "");
  const where = [state.round ? `Round ${state.round}` : "", state.board ? `Board ${state.board}` : ""];
  setText(root, "round", where.filter(Boolean).join(" · "));
  setText(root, "result", state.result === "*" ? "" : state.result);
  renderPlayer("white");
  renderPlayer("black");
  renderEvalBar(root, state);
  renderH2h();
  renderLastMove();
  renderOdds();
  setText(root, "trace-white-label", state.white.name);
  setText(root, "trace-black-label", state.black.name);
  const [note, key] = traceNote();
  setText(root, "trace-note", note);
  byTestId(root, "trace-note").title = key;
  const plot = byTestId(root, "trace-plot");
  if (!plot.closest("[hidden]")) drawTrace(plot, state, mode);
  setText(root, "engine", `${state.engine} · engine rating ${rating(state.engine_rating)} · ${ratingSource()}`);
  const plies = state.moves.length ? state.moves[state.moves.length - 1].ply : 0;
  setText(root, "ply-count", `ply ${plies}`);
  renderChessboard();
  renderGraph();
  renderMoves(); // last: it measures the room the other widgets left
}

function renderChessboard() {
  const box = byTestId(root, "chessboard");
  if (box.closest("[hidden]")) return;
  const last = state.moves.length ? state.moves[state.moves.length - 1] : null;
  renderBoard(box, {
    fen: state.fen,
    lastMove: last ? last.uci : null,
    flip,
    check: last ? checkSquare(state.fen, last.san) : null,
  });
}

function renderGraph() {
  const plot = byTestId(root, "evalgraph-plot");
  if (!plot.closest("[hidden]")) drawEvalGraph(plot, state);
  const strip = byTestId(root, "timestrip-plot");
  if (!strip.closest("[hidden]")) drawTimeStrip(strip, state);
}

const plot = byTestId(root, "trace-plot");
new ResizeObserver(() => {
  if (state && !plot.closest("[hidden]")) drawTrace(plot, state, mode);
}).observe(plot);
const moveList = byTestId(root, "moves");
let moveListHeight = 0;
new ResizeObserver(() => {
  // re-fill the move list when its room changes (it only ever trims itself)
  if (state && moveList.clientHeight !== moveListHeight) {
    moveListHeight = moveList.clientHeight;
    renderMoves();
  }
}).observe(moveList);

const graph = byTestId(root, "evalgraph-plot");
new ResizeObserver(() => {
  if (state && !graph.closest("[hidden]")) drawEvalGraph(graph, state);
}).observe(graph);
const strip = byTestId(root, "timestrip-plot");
new ResizeObserver(() => {
  if (state && !strip.closest("[hidden]")) drawTimeStrip(strip, state);
}).observe(strip);

follower.start();
