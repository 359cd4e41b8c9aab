// The time-use strip under the evaluation graph: the time each move took (the
// wire's `spent`, seconds), White's moves as bars up from the middle line, Black's
// down, on the graph's x axis. A move after which its player's clock was under the
// time-trouble threshold (`clocks.time_trouble_below`) is marked as in trouble.
// Rules: docs/maths.md, "Time use".
import { clockText, moveNumber, svg } from "./lib.js";
import { graphSpan } from "./evalgraph.js";

const MIN_SCALE = 60; // a bar's full height is at least one minute

/**
 * The strip's bars, one per move with a known time spent, in ply order:
 * { ply, color, san, spent, clock, trouble }.
 */
export function timeBars(state) {
  const below = state.clocks ? state.clocks.time_trouble_below : null;
  const out = [];
  for (const m of state.moves || []) {
    if (m.spent === null || m.spent === undefined) continue;
    const clock = m.clock ?? null;
    const trouble = below !== null && below !== undefined && clock !== null && clock < below;
    out.push({ ply: m.ply, color: m.color, san: m.san, spent: m.spent, clock, trouble });
  }
  return out;
}

/** "2:05" for 125 s; "45 s" under a minute. */
export function spentText(s) {
  return s < 60 ? `${s} s` : clockText(s);
}

/**
 * Draws the strip of `state` into `container` (replacing what was there). Each bar
 * has data-testid "timestrip-bar" (data-ply, data-color, data-spent, data-trouble).
 */
export function drawTimeStrip(container, state) {
  const width = Math.max(120, container.clientWidth || 600);
  const height = Math.max(24, container.clientHeight || 40);
  const pad = { left: 6, right: 6, top: 2, bottom: 2 };
  const bars = timeBars(state);
  const span = graphSpan(state);
  const innerW = width - pad.left - pad.right;
  const half = (height - pad.top - pad.bottom) / 2;
  const mid = pad.top + half;
  const x = (ply) => pad.left + (ply / span) * innerW;
  const scale = Math.max(MIN_SCALE, ...bars.map((b) => b.spent));
  const barW = Math.max(1, (innerW / span) * 0.8);
  const root = svg("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "timestrip-svg",
    role: "img",
    "aria-label": "Time spent on each move",
    testid: "timestrip-svg",
    "data-bars": bars.length,
    "data-trouble": bars.filter((b) => b.trouble).length,
  });
  root.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: mid, y2: mid, class: "ts-mid" }));
  for (const b of bars) {
    const h = Math.max(1, (b.spent / scale) * half);
    const rect = svg("rect", {
      x: (x(b.ply) - barW / 2).toFixed(1),
      y: (b.color === "white" ? mid - h : mid).toFixed(1),
      width: barW.toFixed(1),
      height: h.toFixed(1),
      class: `ts-bar ${b.color}${b.trouble ? " trouble" : ""}`,
      testid: "timestrip-bar",
      "data-ply": b.ply,
      "data-color": b.color,
      "data-spent": b.spent,
      "data-trouble": b.trouble ? "true" : "false",
    });
    const tip = svg("title");
    const left = b.clock === null ? "" : `, ${clockText(b.clock)} left`;
    tip.textContent = `${moveNumber(b.ply)} ${b.san}: ${spentText(b.spent)}${left}${b.trouble ? " (time trouble)" : ""}`;
    rect.append(tip);
    root.append(rect);
  }
  container.replaceChildren(root);
}
