// livegain overlay library: connection with back-off, board state, formatting, DOM helpers.
//
// Every value that comes from a feed is written with textContent (never innerHTML),
// so a player called "<img src=x onerror=alert(1)>" is shown literally.

const SVG_NS = "http://www.w3.org/2000/svg";
/** The wire protocol version these pages are written for (docs/protocol/). */
export const PROTOCOL = 4;

// ---------------------------------------------------------------- URL parameters

export const params = new URLSearchParams(location.search);

export function param(name, fallback = null) {
  const v = params.get(name);
  return v === null || v === "" ? fallback : v;
}

export function listParam(name) {
  const v = params.get(name);
  if (!v) return null;
  return new Set(
    v
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** Applies theme, bg and layout parameters to <body>. */
export function applyPageParams(defaults = {}) {
  const body = document.body;
  const theme = param("theme", defaults.theme || "dark") === "light" ? "light" : "dark";
  body.dataset.theme = theme;
  const bg = param("bg", defaults.bg || "solid");
  body.dataset.bg = bg === "transparent" ? "transparent" : "solid";
  const scale = Number(param("scale", "1"));
  if (Number.isFinite(scale) && scale > 0.2 && scale < 5 && scale !== 1) {
    document.documentElement.style.setProperty("--scale", String(scale));
  }
  return { theme, bg: body.dataset.bg };
}

/** Shows or hides every element with data-widget according to show= / hide=. */
export function applyWidgetParams(root = document) {
  const show = listParam("show");
  const hide = listParam("hide");
  for (const el of root.querySelectorAll("[data-widget]")) {
    const name = el.dataset.widget;
    let visible = true;
    if (show) visible = show.has(name);
    if (hide && hide.has(name)) visible = false;
    el.hidden = !visible;
  }
}

// ---------------------------------------------------------------- DOM helpers

/** Creates an element. `text` is always set as textContent. */
export function el(tag, attrs = {}, text = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "testid") node.dataset.testid = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  if (text !== null && text !== undefined) node.textContent = String(text);
  return node;
}

export function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined) continue;
    if (k === "testid") node.setAttribute("data-testid", v);
    else node.setAttribute(k, String(v));
  }
  return node;
}

/** Sets the text of every [data-testid=id] inside root. */
export function setText(root, testid, value) {
  const text = value === null || value === undefined ? "" : String(value);
  for (const node of root.querySelectorAll(`[data-testid="${testid}"]`)) {
    if (node.textContent !== text) node.textContent = text;
  }
}

export function byTestId(root, testid) {
  return root.querySelector(`[data-testid="${testid}"]`);
}

// ---------------------------------------------------------------- formatting

export const DASH = "–";
const MINUS = "−";

export function signed(n, digits = 0) {
  if (n === null || n === undefined || !Number.isFinite(n)) return DASH;
  const r = Number(n.toFixed(digits));
  if (r === 0) return digits ? (0).toFixed(digits) : "0";
  return (r > 0 ? "+" : MINUS) + Math.abs(r).toFixed(digits);
}

export function rating(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return DASH;
  return String(Math.round(n));
}

/** "+1.25", "−0.40", "#3", "#−2" (engine score, White's view). */
export function evalText(ev) {
  if (!ev) return DASH;
  if (ev.mate !== null && ev.mate !== undefined) {
    return ev.mate === 0 ? "#" : ev.mate > 0 ? `#${ev.mate}` : `#${MINUS}${Math.abs(ev.mate)}`;
  }
  return signed(ev.cp / 100, 2);
}

/** Gain in pawns, e.g. "−1.37". */
export function gainText(g) {
  if (g === null || g === undefined) return DASH;
  return signed(g / 100, 2);
}

export function percent(x, digits = 0) {
  if (x === null || x === undefined || !Number.isFinite(x)) return DASH;
  return `${(x * 100).toFixed(digits)}%`;
}

export function perMille(x) {
  if (x === null || x === undefined) return DASH;
  return `${Math.round(x / 10)}%`;
}

export function clockText(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return DASH;
  const t = Math.max(0, Math.floor(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  const mm = h ? String(m).padStart(2, "0") : String(m);
  return (h ? `${h}:` : "") + `${mm}:${String(sec).padStart(2, "0")}`;
}

/** "23." for White's ply, "23…" for Black's. */
export function moveNumber(ply) {
  const n = Math.ceil(ply / 2);
  return ply % 2 === 1 ? `${n}.` : `${n}…`;
}

/** "GM Carlsen, Magnus" style pieces. */
export function playerName(p) {
  return p && p.name ? p.name : "?";
}

/**
 * White's share of the eval bar, 0..1, from the centipawn score (the usual logistic
 * win-chance curve of broadcast eval bars); a mate fills the bar.
 */
export function whiteShare(ev) {
  if (!ev) return 0.5;
  if (ev.mate !== null && ev.mate !== undefined) return ev.mate >= 0 ? 1 : 0;
  return 1 / (1 + Math.exp(-0.00368208 * ev.cp));
}

/** Severity of a move's gain (centipawns): "big-loss", "loss" or "". */
export function gainSeverity(g, bigLoss = 100) {
  if (g === null || g === undefined) return "";
  if (g <= -bigLoss) return "big-loss";
  if (g <= -Math.round(bigLoss / 2)) return "loss";
  return "";
}

// ---------------------------------------------------------------- which rating is shown

/**
 * The rating the page shows: "calibrated" (the default: the estimate fitted on rated
 * games, docs/validity.md) or "algorithm4" (the paper's Algorithm 4, kept for
 * comparison), from the URL parameter `rating`.
 */
export function ratingMode() {
  return String(param("rating", "calibrated")).toLowerCase() === "algorithm4" ? "algorithm4" : "calibrated";
}

/** Short labels of each rating, for titles, legends and tooltips. */
export const RATING_LABELS = {
  calibrated: {
    title: "Perceived rating",
    chart: "Playing at, move by move",
    tip:
      "Calibrated on rated games: the rating of players whose moves look like these. " +
      "95 % interval: where their rating fell in 95 of 100 rated games. " +
      "Too early to tell until the player has made a few moves. " +
      "A player rated outside the ratings it was validated on gets his number with a label beside it " +
      "(extrapolated, not validated on FIDE games). vs FIDE: his form (official rating updated by " +
      "this game's moves) minus his official rating.",
  },
  algorithm4: {
    title: "Algorithm 4 (paper)",
    chart: "Algorithm 4 (paper), move by move",
    tip:
      "The paper's Algorithm 4: moves scored against the engine as win, draw or loss. " +
      "Not calibrated: biased toward the engine rating on real games. ≤ / ≥: " +
      "clamped at the engine rating ∓ 800.",
  },
};

/**
 * What the large number of a player's card is, in the calibrated mode
 * (docs/validity.md, "The headline number"): `form` (his official rating updated
 * by this game's moves: within 25 points of the rating on average in every
 * band) for a rated player, `perceived` (the moves alone, pulled toward the
 * population: hundreds of points off at either end) for a player without a
 * rating, or where the server sends no form. Labels, titles and tooltips of each.
 */
export const HEADLINE_LABELS = {
  form: {
    title: "Form · playing at",
    short: "form",
    tip:
      "Form: his official rating updated by this game's moves (the performance he is showing, " +
      "given his rating and his moves); the chip is its difference to his official rating. " +
      "Moves alone: the rating of players whose moves look like these, calibrated on rated games, " +
      "with its 95 % interval (where their rating fell in 95 of 100 rated games). " +
      "Too early to tell until the player has made a few moves.",
  },
  perceived: {
    title: "Perceived · moves alone",
    short: "moves alone",
    tip:
      "From this game's moves alone (no official rating to start from): the rating of players " +
      "whose moves look like these, calibrated on rated games. 95 % interval: where their rating " +
      "fell in 95 of 100 rated games. Too early to tell until the player has made a few moves. " +
      "A label beside the number: outside the ratings the model was validated on.",
  },
  algorithm4: RATING_LABELS.algorithm4,
};

/**
 * Which number is a player's large one: "algorithm4" with `rating=algorithm4`;
 * else "form" when he has an official rating and the message carries his form,
 * "perceived" otherwise (docs/validity.md, "The headline number").
 */
export function headlineKind(src, color, mode = ratingMode()) {
  if (mode === "algorithm4") return "algorithm4";
  const official = src && src[color] ? src[color].rating : null;
  const form = src ? src[`${color}_form`] : null;
  return official && form && typeof form.early === "boolean" ? "form" : "perceived";
}

/**
 * The large number of a player's card: shownRating's shape for the rating
 * `headlineKind` names (form's fields as the calibrated estimate's), plus its
 * kind. The moves-alone estimate shown beside a form: shownRating(src, color).
 */
export function headlineRating(src, color, mode = ratingMode()) {
  const kind = headlineKind(src, color, mode);
  if (kind !== "form") return { ...shownRating(src, color, mode), kind };
  return { ...calibratedRating(src[`${color}_form`]), kind };
}

const NO_RATING = Object.freeze({
  kind: "calibrated",
  state: "none",
  rating: null,
  low: null,
  high: null,
  moves: 0,
  bound: "",
  label: null,
  scale: null,
  model: null,
});

/**
 * One player's rating as the page shows it, whichever the mode:
 * { kind, state, rating, low, high, moves, bound, label, scale, model } where state is
 * "estimate" (a number to show), "early" (too few moves: show no number) or "none"
 * (nothing to show: no move yet, or no calibrated model on the server); bound is
 * "≤" / "≥" for a clamped Algorithm 4 figure, else ""; label (calibrated only) the
 * words to show beside the number when the player's rating is outside the ratings
 * the model was validated on ("extrapolated", "not validated on FIDE games"), else
 * null; scale its rating scale ("fide", "lichess") and model its name.
 */
export function shownRating(src, color, mode = ratingMode()) {
  const none = { ...NO_RATING, kind: mode };
  if (!src) return none;
  if (mode === "algorithm4") {
    const a = src[`${color}_algorithm4`];
    if (!a || !Number.isFinite(a.rating)) return none;
    const bound = a.bounded ? (a.difference < 0 ? "≤" : "≥") : "";
    return { ...none, state: "estimate", rating: a.rating, low: a.low, high: a.high, moves: a.moves ?? 0, bound };
  }
  return calibratedRating(src[`${color}_perceived`]);
}

/** A calibrated rating of the wire (`*_perceived` or `*_form`) in shownRating's shape. */
function calibratedRating(p) {
  // (a protocol 1 server's `perceived` was Algorithm 4's, without `early`: not shown as calibrated)
  if (!p || typeof p.early !== "boolean") return { ...NO_RATING };
  const moves = p.moves ?? 0;
  const about = { label: p.label ?? null, scale: p.scale ?? null, model: p.model ?? null };
  if (p.early || !Number.isFinite(p.rating)) {
    return { ...NO_RATING, ...about, state: "early", moves };
  }
  return { ...NO_RATING, ...about, state: "estimate", rating: p.rating, low: p.low, high: p.high, moves };
}

/**
 * "vs FIDE": how far the player's play moves his official rating, the figure of
 * the chip beside his rating, or null. Calibrated: his form (`*_form`, the official
 * rating updated by this game's moves) minus his official rating, once his
 * perceived rating is no longer too early; Algorithm 4: its figure minus it.
 */
export function versusOfficial(src, color, mode = ratingMode()) {
  const official = src && src[color] ? src[color].rating : null;
  if (!official) return null;
  const per = shownRating(src, color, mode);
  if (per.state !== "estimate") return null;
  if (mode === "algorithm4") return Math.round(per.rating) - official;
  const form = src[`${color}_form`];
  if (!form || !Number.isFinite(form.rating)) return null;
  return Math.round(form.rating) - official;
}

/** The rating scale of a model, for people: "FIDE scale", "Lichess scale". */
export function scaleText(scale) {
  if (scale === "fide") return "FIDE scale";
  if (scale === "lichess") return "Lichess scale";
  return "";
}

/** The moves played, beside "too early" (a rating with no number yet): "3 moves so far". */
export function earlyText(moves) {
  if (!moves) return "no moves yet";
  return `${moves} move${moves === 1 ? "" : "s"} so far`;
}

/**
 * One player's trace as plotted: [{ ply, rating, low, high, early, none, bounded,
 * perceived }]. `kind` is the player's headlineKind: the line's `rating` is his
 * form for "form" (the band, `low`/`high`, stays the moves-alone 95 % interval,
 * and `perceived` is the moves-alone point, drawn as the secondary line), the
 * calibrated estimate for "perceived" (`perceived` null: it is the line itself),
 * Algorithm 4's (each point's `algorithm4` member) for "algorithm4". Calibrated
 * points that are early, or have no rating (no model: none is true too; a form
 * line: no form at that point), carry early: true and are drawn without a value.
 */
export function shownTrace(trace, mode = ratingMode(), kind = mode === "algorithm4" ? "algorithm4" : "perceived") {
  const out = [];
  for (const p of trace || []) {
    if (mode === "algorithm4") {
      const a = p.algorithm4;
      if (!a || !Number.isFinite(a.rating)) continue;
      out.push({
        ply: p.ply,
        rating: a.rating,
        low: a.low,
        high: a.high,
        early: false,
        bounded: Boolean(a.bounded),
        perceived: null,
      });
      continue;
    }
    const none = !Number.isFinite(p.rating); // no calibrated model on the server
    const headline = kind === "form" ? (p.form && Number.isFinite(p.form.rating) ? p.form.rating : null) : p.rating;
    const early = Boolean(p.early) || none || headline === null;
    out.push({
      ply: p.ply,
      rating: early ? null : headline,
      low: early ? null : p.low,
      high: early ? null : p.high,
      early,
      none,
      bounded: false,
      perceived: early || kind !== "form" ? null : p.rating,
    });
  }
  return out;
}

// ---------------------------------------------------------------- board state

/**
 * Folds a protocol `update` into a BoardState (both plain JSON objects).
 * Returns "ok", "stale" (old or duplicate seq, ignored) or "gap" (re-subscribe).
 */
export function applyUpdate(state, u) {
  if (u.seq <= state.seq) return "stale";
  if (u.seq !== state.seq + 1) return "gap";
  if (u.truncate_to !== null && u.truncate_to !== undefined) {
    const t = u.truncate_to;
    state.moves = state.moves.filter((m) => m.ply <= t);
    state.white_trace = state.white_trace.filter((p) => p.ply <= t);
    state.black_trace = state.black_trace.filter((p) => p.ply <= t);
  }
  if (u.ply) {
    state.moves = state.moves.filter((m) => m.ply !== u.ply.ply);
    state.moves.push(u.ply);
    state.moves.sort((a, b) => a.ply - b.ply);
  }
  state.white_trace = mergePoints(state.white_trace, u.white_points || []);
  state.black_trace = mergePoints(state.black_trace, u.black_points || []);
  // Every update carries the board's current values (null = not known yet).
  for (const key of [
    "eval",
    "white_perceived",
    "black_perceived",
    "white_form",
    "black_form",
    "white_algorithm4",
    "black_algorithm4",
    "white_accuracy",
    "black_accuracy",
    "head_to_head",
    "match",
  ]) {
    state[key] = u[key] ?? null;
  }
  state.clocks = u.clocks || { white: null, black: null, running: null };
  state.fen = u.fen;
  state.result = u.result;
  state.status = u.status;
  state.seq = u.seq;
  return "ok";
}

function mergePoints(trace, points) {
  if (!points.length) return trace;
  const byPly = new Map(trace.map((p) => [p.ply, p]));
  for (const p of points) byPly.set(p.ply, p);
  return [...byPly.values()].sort((a, b) => a.ply - b.ply);
}

/** "Delayed 15 min" for a board shown `seconds` late (a broadcast delay); null when live. */
export function delayText(seconds) {
  const s = Number(seconds) || 0;
  if (s <= 0) return null;
  if (s < 60) return `Delayed ${Math.round(s)} s`;
  if (s < 3600 || s % 3600) {
    const m = s / 60;
    return `Delayed ${Number.isInteger(m) ? m : m.toFixed(1)} min`;
  }
  return `Delayed ${s / 3600} h`;
}

/**
 * Shows that the broadcast is delayed, and by how much: a small badge (made on
 * first use) in the page's [data-delay-slot] when that is shown, else in a corner
 * of `root`. Hidden while the board is live, and with hide=delay.
 */
export function renderDelay(root, state) {
  const text = delayText(state && state.delay);
  let badge = byTestId(root, "delay");
  if (!badge) {
    if (!text) return;
    const slot = root.querySelector("[data-delay-slot]");
    const inSlot = slot !== null && !slot.closest("[hidden]");
    badge = el("span", {
      class: inSlot ? "delay-badge" : "delay-badge floating",
      testid: "delay",
      title: "the broadcast is delayed: moves, clocks and figures are shown this late",
    });
    (inSlot ? slot : root).append(badge);
  }
  const hide = listParam("hide");
  badge.hidden = !text || (hide !== null && hide.has("delay"));
  badge.dataset.seconds = String((state && state.delay) || 0);
  if (badge.textContent !== (text || "")) badge.textContent = text || "";
}

/** The latest evaluation to show: the current one, else the last evaluated ply's (pending). */
export function displayEval(state) {
  if (state.eval) return { ev: state.eval, pending: false };
  for (let i = state.moves.length - 1; i >= 0; i--) {
    if (state.moves[i].eval) return { ev: state.moves[i].eval, pending: true };
  }
  return { ev: state.start_eval || null, pending: true };
}

/** A BoardSummary-shaped view of a BoardState (for the multi-board page). */
export function summaryOf(state) {
  return {
    board_id: state.board_id,
    tournament: state.tournament,
    round: state.round,
    board: state.board,
    white: state.white,
    black: state.black,
    result: state.result,
    plies: state.moves.length ? state.moves[state.moves.length - 1].ply : 0,
    eval: state.eval,
    white_perceived: state.white_perceived,
    black_perceived: state.black_perceived,
    white_form: state.white_form ?? null,
    black_form: state.black_form ?? null,
    white_algorithm4: state.white_algorithm4 ?? null,
    black_algorithm4: state.black_algorithm4 ?? null,
  };
}

// ---------------------------------------------------------------- connection

export function wsUrl() {
  const override = param("ws");
  if (override) return override;
  // lib.js is served at <base>/overlay/static/lib.js; the socket is <base>/ws.
  const url = new URL("../../ws", import.meta.url);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

/**
 * A WebSocket that reconnects by itself: 0.5 s, doubling up to 10 s, reset after a
 * successful connection. A connection that stays silent (no message, not even the
 * answer to our ping) for `silence` ms counts as lost, as does a hanging handshake. `handlers` receives parsed messages by type, plus
 * onState("connecting" | "live" | "reconnecting") and onOpen(send).
 */
export class LiveConnection {
  constructor(handlers, { minDelay = 500, maxDelay = 10000, silence = null } = {}) {
    this.handlers = handlers;
    this.minDelay = minDelay;
    this.maxDelay = maxDelay;
    // a link silent this long is dead (URL parameter `silence`, seconds; default 50)
    const s = Number(silence ?? param("silence", "50"));
    this.silence = Number.isFinite(s) && s >= 1 ? s * 1000 : 50000;
    this.pingEvery = Math.min(20000, this.silence * 0.4);
    this.connectTimeout = Math.max(3000, Math.min(10000, this.silence));
    this.delay = minDelay;
    this.ws = null;
    this.timer = null;
    this.pingTimer = null;
    this.everConnected = false;
    this.state = "connecting";
  }

  start() {
    this.setState("connecting");
    this.open();
  }

  setState(s) {
    this.state = s;
    document.body.dataset.connection = s;
    if (this.handlers.onState) this.handlers.onState(s);
  }

  open() {
    let ws;
    try {
      ws = new WebSocket(wsUrl());
    } catch (e) {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    // a handshake that hangs (a network that swallows packets) is abandoned and retried
    const connectTimer = setTimeout(() => {
      if (ws.readyState === WebSocket.CONNECTING) {
        ws.close();
        this.onClosed(ws);
      }
    }, this.connectTimeout);
    ws.addEventListener("open", () => {
      clearTimeout(connectTimer);
      this.delay = this.minDelay;
      this.everConnected = true;
      this.lastMessage = Date.now();
      if (this.handlers.onOpen) this.handlers.onOpen();
      // ping regularly; a link silent for `silence` (a half-open TCP connection after
      // a network cut) is closed, which marks the figures stale and reconnects
      this.pingTimer = setInterval(() => {
        if (Date.now() - this.lastMessage > this.silence) {
          console.warn("livegain: connection silent, reconnecting");
          ws.close();
          this.onClosed(ws);
          return;
        }
        this.send({ type: "ping" });
      }, this.pingEvery);
    });
    ws.addEventListener("message", (ev) => {
      if (this.ws !== ws) return; // a connection given up on
      this.lastMessage = Date.now();
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        console.warn("livegain: unreadable message", ev.data);
        return;
      }
      if (!msg || typeof msg.type !== "string") return;
      if (msg.type === "hello") {
        if (msg.protocol !== PROTOCOL) {
          console.warn("livegain: server speaks protocol", msg.protocol, "; this page", PROTOCOL);
        }
        document.body.dataset.protocol = String(msg.protocol);
        this.setState("live");
      }
      const h = this.handlers[msg.type];
      if (h) {
        try {
          h(msg);
        } catch (e) {
          console.error("livegain: handler failed", msg.type, e);
        }
      }
    });
    ws.addEventListener("close", () => this.onClosed(ws));
    ws.addEventListener("error", () => {
      // a close event follows
    });
  }

  onClosed(ws) {
    if (this.ws !== ws) return; // already handled
    clearInterval(this.pingTimer);
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    this.ws = null;
    this.setState(this.everConnected ? "reconnecting" : "connecting");
    clearTimeout(this.timer);
    const wait = this.delay;
    this.delay = Math.min(this.maxDelay, this.delay * 2);
    this.timer = setTimeout(() => this.open(), wait);
  }

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }
}

/** Writes the connection state into a [data-testid=status] element. */
export function renderStatus(root, state, liveText = "LIVE") {
  const node = byTestId(root, "status");
  if (!node) return;
  const text =
    state === "live" ? liveText : state === "reconnecting" ? "RECONNECTING…" : "CONNECTING…";
  node.textContent = text;
  node.dataset.state = state;
}

// spacing of list_boards requests, under the server's limit of 20 messages a second
const PAGE_DELAY = 60;

/**
 * The server's board list (board_id -> summary), kept current from `hello` (the
 * first page), `boards` (the next pages, asked for with `list_boards`) and
 * `boards_diff` (what changed). Use `handlers(conn)` among a LiveConnection's
 * handlers; `onChange(list, removed)` runs after each change, with the ids just
 * removed. `complete` is true once every page has arrived.
 */
export class BoardList {
  constructor(onChange) {
    this.onChange = onChange;
    this.map = new Map();
    this.complete = false;
    this.unconfirmed = null; // ids known before a first page and not listed since
    this.conn = null;
    this.ws = null;
    this.timer = null;
  }

  handlers(conn) {
    this.conn = conn;
    return {
      hello: (msg) => {
        this.ws = conn.ws;
        this.reset();
        this.take(msg.boards || [], msg.boards_next ?? null);
      },
      boards: (msg) => {
        if (msg.reset) this.reset();
        this.take(msg.boards || [], msg.next ?? null);
      },
      boards_diff: (msg) => this.diff(msg),
    };
  }

  reset() {
    clearTimeout(this.timer);
    this.unconfirmed = new Set(this.map.keys());
  }

  upsert(summary) {
    this.map.set(summary.board_id, summary);
    if (this.unconfirmed) this.unconfirmed.delete(summary.board_id);
  }

  take(list, next) {
    for (const s of list) this.upsert(s);
    const removed = [];
    if (next === null) {
      for (const id of this.unconfirmed || []) {
        this.map.delete(id);
        removed.push(id);
      }
      this.unconfirmed = null;
      this.complete = true;
    } else {
      this.complete = false;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        // only on the connection the pages belong to (a new one sends its own hello)
        if (this.conn && this.conn.ws === this.ws) {
          this.conn.send({ type: "list_boards", cursor: next });
        }
      }, PAGE_DELAY);
    }
    this.onChange(this, removed);
  }

  diff(msg) {
    for (const s of msg.added || []) this.upsert(s);
    for (const s of msg.changed || []) this.upsert(s);
    const removed = msg.removed || [];
    for (const id of removed) {
      this.map.delete(id);
      if (this.unconfirmed) this.unconfirmed.delete(id);
    }
    this.onChange(this, removed);
  }

  list() {
    return [...this.map.values()];
  }

  has(id) {
    return this.map.has(id);
  }
}
