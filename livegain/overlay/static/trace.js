// The rating trace (Figure 6 of the paper, live): one line per player, the official
// ratings dashed, drawn as SVG by the page itself. Each player's line is his large
// number (lib.js headlineKind, docs/validity.md "The headline number"): his form (his
// official rating updated by the moves so far) when he is rated, with the moves-alone
// estimate kept as the secondary layer (a thin line and its 95 % interval band);
// for a player without a rating the moves-alone estimate and its band, as the
// line. With `rating=algorithm4`: Algorithm 4 and its interval. A calibrated point
// that is still "too early" has no value: it is drawn as a hollow mark on the
// chart's floor, with no band and no line, inside a shaded "too early" zone.
import { RATING_LABELS, headlineKind, ratingMode, shownTrace, svg } from "./lib.js";

const PAD = { left: 64, right: 92, top: 14, bottom: 34 };

function niceStep(span, target, integer = false) {
  const raw = span / Math.max(1, target);
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (integer && m === 2.5) continue;
    if (m * pow >= raw) return Math.max(integer ? 1 : 0, m * pow);
  }
  return 10 * pow;
}

/** A point with a value to plot (not too early). */
function hasValue(p) {
  return !p.early;
}

/**
 * The y domain of a rating chart: the measured (neither clamped nor early) ratings
 * of `traces` and the `officials`, widened to `minSpan` around their middle; null
 * when there is none. Flagged (clamped) points and the bands may fall outside:
 * drawn at the edge / clipped.
 */
function ratingSpan(traces, officials, minSpan) {
  const ys = [];
  for (const t of traces) {
    for (const p of t) {
      if (p.bounded || !hasValue(p)) continue;
      ys.push(p.rating);
      if (p.perceived !== null && p.perceived !== undefined) ys.push(p.perceived);
    }
  }
  for (const r of officials) if (r) ys.push(r);
  if (!ys.length) return null;
  let lo = Math.min(...ys);
  let hi = Math.max(...ys);
  if (hi - lo < minSpan) {
    const mid = (hi + lo) / 2;
    lo = mid - minSpan / 2;
    hi = mid + minSpan / 2;
  }
  return [lo, hi];
}

/**
 * Draws the trace of `state` (a BoardState) into `container`, replacing what was
 * there; `mode` is "calibrated" or "algorithm4".
 */
export function drawTrace(container, state, mode = ratingMode()) {
  const width = Math.max(200, container.clientWidth || 800);
  const height = Math.max(120, container.clientHeight || 300);
  const small = height < 220;
  const pad = small ? { left: 48, right: 64, top: 8, bottom: 24 } : PAD;
  const kinds = {
    white: headlineKind(state, "white", mode),
    black: headlineKind(state, "black", mode),
  };
  const traces = {
    white: shownTrace(state.white_trace, mode, kinds.white),
    black: shownTrace(state.black_trace, mode, kinds.black),
  };
  const official = { white: state.white.rating, black: state.black.rating };

  let [lo, hi] =
    ratingSpan([traces.white, traces.black], [official.white, official.black], 300) ??
    ratingSpan([], [state.engine_rating || 2800], 300);
  const margin = (hi - lo) * 0.12;
  lo -= margin;
  hi += margin;
  const yStep = niceStep(hi - lo, small ? 3 : 6);
  lo = Math.floor(lo / yStep) * yStep;
  hi = Math.ceil(hi / yStep) * yStep;

  const maxPly = Math.max(
    0,
    ...traces.white.map((p) => p.ply),
    ...traces.black.map((p) => p.ply),
    ...(state.moves || []).map((m) => m.ply),
  );
  const maxMove = Math.max(20, Math.ceil(maxPly / 2) + 2);
  const x = (ply) => pad.left + ((ply / 2) / maxMove) * (width - pad.left - pad.right);
  const yRaw = (r) => pad.top + (1 - (r - lo) / (hi - lo)) * (height - pad.top - pad.bottom);
  const y = (r) => yRaw(Math.min(hi, Math.max(lo, r)));

  const root = svg("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "trace-svg",
    role: "img",
    "aria-label": `${RATING_LABELS[mode].title} of both players after each move`,
    testid: "trace-svg",
    "data-kind": mode,
  });
  const clipId = `clip-${Math.random().toString(36).slice(2)}`;
  const defs = svg("defs");
  const clip = svg("clipPath", { id: clipId });
  clip.append(
    svg("rect", {
      x: pad.left,
      y: pad.top,
      width: width - pad.left - pad.right,
      height: height - pad.top - pad.bottom,
    }),
  );
  defs.append(clip);
  root.append(defs);

  // grid
  const grid = svg("g", { class: "grid" });
  for (let v = lo; v <= hi + 1e-9; v += yStep) {
    grid.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: yRaw(v), y2: yRaw(v) }));
    const t = svg("text", { x: pad.left - 10, y: yRaw(v), class: "ylabel" });
    t.textContent = String(Math.round(v));
    grid.append(t);
  }
  const xStep = niceStep(maxMove, small ? 4 : 8, true);
  for (let mv = 0; mv <= maxMove; mv += xStep) {
    const t = svg("text", { x: x(mv * 2), y: height - pad.bottom + (small ? 16 : 24), class: "xlabel" });
    t.textContent = String(mv);
    grid.append(t);
  }
  const unit = svg("text", {
    x: width - 4,
    y: height - pad.bottom + (small ? 16 : 24),
    class: "xlabel unit",
  });
  unit.textContent = "move";
  grid.append(unit);
  root.append(grid);

  const plotArea = svg("g", { "clip-path": `url(#${clipId})` });
  root.append(plotArea);
  const labels = [];
  const floor = height - pad.bottom; // where points without a value sit

  // the stretch of the game where a player's estimate is still too early to tell
  const early = [...traces.white, ...traces.black].filter((p) => p.early);
  const measured = [...traces.white, ...traces.black].filter((p) => !p.early).length;
  const earlyRight = measured && early.length ? x(Math.max(...early.map((p) => p.ply)) + 0.5) : pad.left;
  if (early.length) {
    const right = measured ? earlyRight : width - pad.right;
    const zone = svg("g", { class: "early-zone", testid: "trace-early-zone" });
    zone.append(
      svg("rect", {
        class: "early-zone-fill",
        x: pad.left,
        y: pad.top,
        width: Math.max(0, right - pad.left),
        height: floor - pad.top,
      }),
    );
    // a note in words, where there is room for it (the hollow marks on the floor say it too)
    if (!measured || right - pad.left >= (small ? 70 : 100)) {
      const t = svg("text", {
        x: measured ? pad.left + 8 : (pad.left + width - pad.right) / 2,
        y: measured ? pad.top + (small ? 14 : 22) : (pad.top + floor) / 2,
        class: measured ? "early-note" : "early-note centre",
      });
      // points without a rating at all: the server has no calibrated model
      const noModel = early.every((p) => p.none);
      t.textContent = noModel ? "no calibrated rating" : measured ? "too early" : "too early to tell";
      zone.append(t);
    }
    plotArea.append(zone);
  }

  for (const c of ["white", "black"]) {
    const pts = traces[c];
    const g = svg("g", {
      class: `series ${c}`,
      testid: `trace-${c}`,
      "data-points": pts.length,
      "data-kind": kinds[c],
    });
    if (official[c]) {
      g.append(
        svg("line", {
          class: "official",
          x1: pad.left,
          x2: width - pad.right,
          y1: y(official[c]),
          y2: y(official[c]),
        }),
      );
    }
    // the band and the line join the points that have a value (early ones have none)
    const shown = pts.filter(hasValue);
    if (shown.length) {
      const upper = shown.map((p) => `${x(p.ply).toFixed(1)},${y(p.high).toFixed(1)}`);
      const lower = shown
        .slice()
        .reverse()
        .map((p) => `${x(p.ply).toFixed(1)},${y(p.low).toFixed(1)}`);
      g.append(svg("path", { class: "band", d: `M${upper.join("L")}L${lower.join("L")}Z` }));
      // beside a form line, the moves-alone estimate it comes from: a thin line in the band
      if (kinds[c] === "form") {
        const alone = shown.map((p) => `${x(p.ply).toFixed(1)},${y(p.perceived).toFixed(1)}`);
        g.append(
          svg("path", {
            class: "line secondary",
            d: `M${alone.join("L")}`,
            testid: `trace-${c}-perceived`,
            "data-ratings": shown.map((p) => p.perceived).join(","),
          }),
        );
      }
      // solid where both ends are real estimates, dashed where a clamped (p = 0 or 1) point is involved
      for (let i = 1; i < shown.length; i++) {
        const a = shown[i - 1];
        const b = shown[i];
        const provisional = a.bounded || b.bounded;
        g.append(
          svg("path", {
            class: provisional ? "line provisional" : "line",
            d: `M${x(a.ply).toFixed(1)},${y(a.rating).toFixed(1)}L${x(b.ply).toFixed(1)},${y(b.rating).toFixed(1)}`,
          }),
        );
      }
    }
    for (const p of pts) {
      if (!hasValue(p)) {
        g.append(
          svg("circle", {
            class: "point early",
            cx: x(p.ply).toFixed(1),
            cy: (floor - (small ? 4 : 6)).toFixed(1),
            r: small ? 2.5 : 3.5,
            testid: `trace-${c}-point`,
            "data-ply": p.ply,
            "data-rating": "",
            "data-early": "true",
          }),
        );
        continue;
      }
      const out = p.bounded || p.rating < lo || p.rating > hi;
      g.append(
        svg("circle", {
          class: out ? "point bounded" : "point",
          cx: x(p.ply).toFixed(1),
          cy: y(p.rating).toFixed(1),
          r: small ? 2.5 : 4,
          testid: `trace-${c}-point`,
          "data-ply": p.ply,
          "data-rating": p.rating,
          "data-perceived": p.perceived ?? "",
          "data-early": "false",
        }),
      );
    }
    const last = pts[pts.length - 1];
    if (last && hasValue(last)) {
      labels.push({ c, y: y(last.rating), text: String(Math.round(last.rating)) });
    }
    plotArea.append(g);
  }

  // end labels on the right, nudged apart when they would overlap
  labels.sort((a, b) => a.y - b.y);
  const gap = small ? 24 : 26; // the labels are set in 24px type
  if (labels.length === 2 && labels[1].y - labels[0].y < gap) {
    const mid = (labels[0].y + labels[1].y) / 2;
    labels[0].y = mid - gap / 2;
    labels[1].y = mid + gap / 2;
  }
  for (const l of labels) {
    const t = svg("text", {
      x: width - pad.right + 8,
      y: l.y,
      class: `endlabel ${l.c}`,
      testid: `trace-${l.c}-end`,
    });
    t.textContent = l.text;
    root.append(t);
  }
  container.replaceChildren(root);
}

/**
 * One player's rating, move by move, as a sparkline: the line of his large
 * number (`kind`, lib.js headlineKind: his form when rated), the moves-alone
 * 95 % band, the official rating dashed (the lower third's player cards).
 * `trace` is the protocol's trace (plotted as `mode` says). Points clamped at
 * the engine rating ± 800 are drawn at the edge; early points (too early to
 * tell) have no value and are left out of the line, which starts after them.
 */
export function drawSpark(container, trace, official, mode = ratingMode(), kind) {
  container.replaceChildren();
  const width = container.clientWidth;
  const height = container.clientHeight;
  if (width < 40 || height < 12) return;
  const all = shownTrace(trace, mode, kind);
  const points = all.filter(hasValue);
  const range = ratingSpan([points], [official], 200);
  if (!range) return;
  const [lo, hi] = range;
  const pad = 3;
  const first = all.length ? all[0].ply : 0;
  const last = all.length ? all[all.length - 1].ply : 1;
  const span = Math.max(1, last - first);
  const x = (ply) => pad + ((ply - first) / span) * (width - 2 * pad);
  const y = (r) => pad + (1 - (Math.min(hi, Math.max(lo, r)) - lo) / (hi - lo)) * (height - 2 * pad);
  const root = svg("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "spark-svg",
    testid: container.dataset.testid ? `${container.dataset.testid}-svg` : null,
    "data-points": all.length,
    "data-early": all.filter((p) => p.early).length,
    "data-kind": kind ?? (mode === "algorithm4" ? "algorithm4" : "perceived"),
  });
  if (official) {
    root.append(
      svg("line", { x1: 0, x2: width, y1: y(official), y2: y(official), class: "spark-official" }),
    );
  }
  if (points.length >= 2) {
    const upper = points.map((p) => `${x(p.ply).toFixed(1)},${y(p.high).toFixed(1)}`);
    const lower = points.map((p) => `${x(p.ply).toFixed(1)},${y(p.low).toFixed(1)}`).reverse();
    root.append(svg("polygon", { points: [...upper, ...lower].join(" "), class: "spark-band" }));
    root.append(
      svg("polyline", {
        points: points.map((p) => `${x(p.ply).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" "),
        class: "spark-line",
        "data-points": points.length,
      }),
    );
  }
  if (points.length) {
    const end = points[points.length - 1];
    root.append(svg("circle", { cx: x(end.ply), cy: y(end.rating), r: 3.5, class: "spark-dot" }));
  }
  container.append(root);
}
