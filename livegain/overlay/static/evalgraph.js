// The evaluation graph: White's winning chances after every evaluated ply of the
// game, as an SVG area chart (White's share light, from the bottom; Black's dark),
// with the big losses marked by dots in the colour of the player who made them.
//
// Winning chances are White's expected score in [0, 1]: from the engine's
// win/draw/loss when the ply's evaluation has one (win + draw / 2, per mille),
// else from the centipawns on the eval bar's curve (lib.js whiteShare; a mate
// counts as 1 or 0).
//
// A big loss (docs/obs.md) is a move that loses at least BIG_LOSS_CP centipawns
// (its gain, on the wire) or that lowers its own player's winning chances by
// more than BIG_DROP (20 points of 100) from the position before it.
import { gainText, moveNumber, svg, whiteShare } from "./lib.js";

export const BIG_LOSS_CP = 200;
export const BIG_DROP = 0.2;
const MIN_PLIES = 60; // the x axis spans at least 30 moves, then the whole game

/** Plies the x axis spans: at least 30 moves, then the whole game (the time strip shares it). */
export function graphSpan(state) {
  const lastPly = Math.max(0, ...(state.moves || []).map((m) => m.ply));
  return Math.max(MIN_PLIES, lastPly + 2);
}

/** White's winning chances for one evaluation (an EvalInfo), 0..1; null without one. */
export function winChance(ev) {
  if (!ev) return null;
  const w = ev.wdl;
  const total = w ? w.win + w.draw + w.loss : 0;
  if (total > 0) return (w.win + w.draw / 2) / total;
  const mate = ev.mate !== null && ev.mate !== undefined;
  return mate || Number.isFinite(ev.cp) ? whiteShare(ev) : null;
}

/**
 * The graph's points, one per evaluated ply of `state` (a BoardState), in ply
 * order: { ply, color, san, win, gain, drop, big }, where `drop` is how much the
 * move lowered its own player's winning chances (null when the position before it
 * has no evaluation) and `big` whether it is a big loss.
 */
export function evalPoints(state, { lossCp = BIG_LOSS_CP, dropLimit = BIG_DROP } = {}) {
  const out = [];
  let before = winChance(state.start_eval); // the position before ply 1, when known
  let beforePly = 0;
  for (const m of state.moves || []) {
    const win = winChance(m.eval);
    if (win === null) {
      before = null; // the next move's starting position is unknown
      continue;
    }
    let drop = null;
    if (before !== null && beforePly === m.ply - 1) {
      drop = m.color === "white" ? before - win : win - before;
    }
    const gain = m.gain ?? null;
    const big = (gain !== null && gain <= -lossCp) || (drop !== null && drop > dropLimit);
    out.push({ ply: m.ply, color: m.color, san: m.san, win, gain, drop, big });
    before = win;
    beforePly = m.ply;
  }
  return out;
}

/**
 * Draws the graph of `state` into `container` (replacing what was there), sized
 * to the container. Each point is a circle with data-testid "evalgraph-point"
 * (data-ply, data-win); each big loss a dot with data-testid "evalgraph-loss"
 * (data-ply, data-color).
 */
export function drawEvalGraph(container, state, options = {}) {
  const width = Math.max(120, container.clientWidth || 600);
  const height = Math.max(48, container.clientHeight || 120);
  const small = height < 110;
  const pad = { left: 6, right: 6, top: 8, bottom: small ? 18 : 24 };
  const pts = evalPoints(state, options);
  const start = winChance(state.start_eval);
  const span = graphSpan(state);
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const x = (ply) => pad.left + (ply / span) * innerW;
  const y = (win) => pad.top + (1 - win) * innerH;
  const bottom = pad.top + innerH;

  const root = svg("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "evalgraph-svg",
    role: "img",
    "aria-label": "White's winning chances after each move",
    testid: "evalgraph-svg",
    "data-points": pts.length,
    "data-losses": pts.filter((p) => p.big).length,
  });
  root.append(svg("rect", { x: pad.left, y: pad.top, width: innerW, height: innerH, class: "eg-black" }));

  if (pts.length) {
    // White's area: from the bottom up to the curve (the start of the game at 50 %
    // when the position before the first move has no evaluation)
    const line = [[0, start ?? 0.5], ...pts.map((p) => [p.ply, p.win])];
    const d = line.map(([ply, w], i) => `${i ? "L" : "M"}${x(ply).toFixed(1)},${y(w).toFixed(1)}`).join("");
    const lastX = x(line[line.length - 1][0]).toFixed(1);
    root.append(svg("path", { d: `${d}L${lastX},${bottom}L${x(0).toFixed(1)},${bottom}Z`, class: "eg-white" }));
    root.append(svg("path", { d, class: "eg-line" }));
  }

  // 50 % and move numbers
  const grid = svg("g", { class: "eg-grid" });
  grid.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: y(0.5), y2: y(0.5), class: "eg-mid" }));
  const moves = span / 2;
  const step = moves <= 40 ? 10 : moves <= 100 ? 20 : 50;
  for (let mv = step; mv < moves; mv += step) {
    grid.append(svg("line", { x1: x(mv * 2), x2: x(mv * 2), y1: pad.top, y2: bottom, class: "eg-tick" }));
    const t = svg("text", { x: x(mv * 2), y: height - (small ? 4 : 6), class: "eg-xlabel" });
    t.textContent = String(mv);
    grid.append(t);
  }
  root.append(grid);

  const dots = svg("g", { class: "eg-points" });
  for (const p of pts) {
    dots.append(
      svg("circle", {
        cx: x(p.ply).toFixed(1),
        cy: y(p.win).toFixed(1),
        r: 1.6,
        class: "eg-point",
        testid: "evalgraph-point",
        "data-ply": p.ply,
        "data-win": p.win.toFixed(4),
      }),
    );
  }
  root.append(dots);
  const losses = svg("g", { class: "eg-losses" });
  for (const p of pts.filter((q) => q.big)) {
    const dot = svg("circle", {
      cx: x(p.ply).toFixed(1),
      cy: y(p.win).toFixed(1),
      r: small ? 4.5 : 6,
      class: `eg-loss ${p.color}`,
      testid: "evalgraph-loss",
      "data-ply": p.ply,
      "data-color": p.color,
    });
    const tip = svg("title");
    const drop = p.drop === null ? "" : `, winning chances −${Math.round(p.drop * 100)}`;
    tip.textContent = `${moveNumber(p.ply)} ${p.san}: gain ${gainText(p.gain)}${drop}`;
    dot.append(tip);
    losses.append(dot);
  }
  root.append(losses);
  if (pts.length) {
    const last = pts[pts.length - 1];
    root.append(
      svg("circle", { cx: x(last.ply).toFixed(1), cy: y(last.win).toFixed(1), r: small ? 3 : 4, class: "eg-now" }),
    );
  }
  container.replaceChildren(root);
}
