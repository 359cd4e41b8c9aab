// Multi-board view: every board of the round, compactly. See docs/obs.md.
import {
  BoardList,
  DASH,
  HEADLINE_LABELS,
  LiveConnection,
  applyPageParams,
  applyUpdate,
  applyWidgetParams,
  byTestId,
  displayEval,
  earlyText,
  el,
  evalText,
  headlineRating,
  param,
  rating,
  ratingMode,
  setText,
  shownRating,
  signed,
  summaryOf,
  versusOfficial,
  whiteShare,
} from "./lib.js";

applyPageParams();
applyWidgetParams();

const root = document.querySelector("main");
// which rating is shown: the calibrated estimate, or the paper's Algorithm 4 (rating=algorithm4)
const mode = ratingMode();
root.dataset.rating = mode;
setText(
  root,
  "legend",
  mode === "algorithm4"
    ? "Large figure: Algorithm 4 (paper), the paper's perceived rating, not calibrated (≤ / ≥: clamped; chip: difference to FIDE rating) · bar: engine evaluation"
    : "Large figure: form, the FIDE rating updated by this game's moves (chip: minus the FIDE rating); beside it the moves alone, calibrated on rated games, with its 95 % interval; unrated: the moves alone · too early: too few moves yet · a label: rated outside the validated ratings · bar: engine evaluation",
);
const grid = byTestId(root, "boards");
const filterTournament = param("tournament");
const filterRound = param("round");
const cols = Number(param("cols", "0"));
// more boards than the screen holds: show them a page at a time, `cycle` seconds each
const cycle = Number(param("cycle", "10"));
let pageNo = 0;
let pages = 1;

/** board_id -> { summary, state } (state once a snapshot arrived). */
const boards = new Map();
let connState = "connecting";
let fresh = false;

const conn = new LiveConnection({
  onState(s) {
    connState = s;
    if (s !== "live") fresh = false;
    renderStatus();
  },
  onOpen() {
    fresh = false;
    renderStatus();
    conn.send({ type: "subscribe", boards: "*" });
  },
  hello() {
    fresh = true; // the list itself: BoardList below
  },
  snapshot(msg) {
    const st = msg.state; // a fresh object from JSON.parse: no copy needed
    const entry = boards.get(st.board_id) || {};
    entry.state = st;
    entry.summary = summaryOf(st);
    boards.set(st.board_id, entry);
    scheduleRender();
  },
  update(msg) {
    const entry = boards.get(msg.board_id);
    if (!entry || !entry.state) return;
    const r = applyUpdate(entry.state, msg);
    if (r === "gap") {
      entry.state = null;
      conn.send({ type: "subscribe", boards: [msg.board_id] });
      return;
    }
    if (r === "ok") {
      entry.summary = summaryOf(entry.state);
      scheduleRender();
    }
  },
});

const boardList = new BoardList((l, removed) => {
  for (const id of removed) boards.delete(id);
  // a board followed by its snapshots stays until the whole list says it is gone
  if (l.complete) for (const id of [...boards.keys()]) if (!l.has(id)) boards.delete(id);
  setSummaries(l.list());
  scheduleRender();
});
const listHandlers = boardList.handlers(conn);
conn.handlers.boards = listHandlers.boards;
conn.handlers.boards_diff = listHandlers.boards_diff;
const onHello = conn.handlers.hello;
conn.handlers.hello = (msg) => {
  onHello(msg);
  listHandlers.hello(msg);
};

function setSummaries(list) {
  for (const s of list) {
    const entry = boards.get(s.board_id) || {};
    // a snapshot/update is newer than a list entry; keep the state we follow
    if (!entry.state) entry.summary = s;
    else {
      entry.summary = { ...summaryOf(entry.state), white: s.white, black: s.black, result: s.result };
    }
    boards.set(s.board_id, entry);
  }
}

function visible() {
  return [...boards.values()]
    .map((e) => e.summary)
    .filter((s) => !filterTournament || s.tournament === filterTournament)
    .filter((s) => !filterRound || String(s.round) === filterRound)
    .sort(
      (a, b) =>
        String(a.tournament ?? "").localeCompare(String(b.tournament ?? "")) ||
        String(a.round ?? "").localeCompare(String(b.round ?? ""), undefined, { numeric: true }) ||
        (a.board ?? 1e9) - (b.board ?? 1e9) ||
        a.board_id.localeCompare(b.board_id),
    );
}

function renderStatus() {
  root.dataset.fresh = connState === "live" && fresh ? "true" : "false";
  const status = byTestId(root, "status");
  const [s, text] =
    connState === "reconnecting"
      ? ["reconnecting", "RECONNECTING…"]
      : connState === "connecting"
        ? ["connecting", "CONNECTING…"]
        : !fresh
          ? ["syncing", "SYNCING…"]
          : ["live", "LIVE"];
  status.dataset.state = s;
  status.textContent = text;
}

function playerRow(color, s) {
  const p = s[color];
  // the large number: his form when rated, else the moves alone (docs/validity.md,
  // "The headline number"); the moves alone beside a form, in smaller type
  const head = headlineRating(s, color, mode);
  const shown = head.state === "estimate";
  const row = el("div", { class: `pl ${color}` });
  const who = el("div", { class: "who" });
  who.append(
    el("span", { class: "swatch", "aria-hidden": "true" }),
    el("span", { class: "tt", testid: `${color}-title` }, p.title || ""),
    el("span", { class: "nm", testid: `${color}-name` }, p.name),
    el("span", { class: "elo", testid: `${color}-rating` }, p.rating ?? ""),
  );
  const perc = el("div", { class: "perc live-value", "data-widget": "perceived" });
  perc.dataset.kind = mode;
  perc.dataset.headline = head.kind;
  perc.dataset.state = head.state;
  perc.title = HEADLINE_LABELS[head.kind].tip;
  const text = shown ? rating(head.rating) : head.state === "early" ? "too early" : DASH;
  const value = el("span", { class: "v", testid: `${color}-headline` }, text);
  value.dataset.kind = head.kind;
  value.dataset.value = shown ? String(head.rating) : "";
  value.dataset.early = head.state === "early" ? "true" : "false";
  if (head.bound) {
    // every move so far lost (or gained) ground: the figure is clamped
    perc.append(el("span", { class: "bound", testid: `${color}-headline-bound` }, head.bound));
  }
  perc.append(value);
  if (head.state === "early") {
    perc.append(el("span", { class: "d so-far", testid: `${color}-headline-moves` }, earlyText(head.moves)));
  }
  const d = versusOfficial(s, color, mode); // form minus official rating
  if (d !== null) {
    const chip = el("span", { class: "d diff", testid: `${color}-headline-diff` }, signed(d));
    chip.dataset.sign = Math.round(d) > 0 ? "up" : Math.round(d) < 0 ? "down" : "zero";
    perc.append(chip);
  }
  const per = shownRating(s, color, mode);
  if (head.kind === "form" && per.state === "estimate") {
    const alone = el("span", { class: "d alone", testid: `${color}-moves-alone` }, "moves alone ");
    const v = el("b", { testid: `${color}-perceived` }, rating(per.rating));
    v.dataset.value = String(per.rating);
    const interval = el("span", { class: "alone-interval", testid: `${color}-perceived-interval` });
    interval.textContent = ` (${rating(per.low)}–${rating(per.high)})`;
    alone.append(v, interval);
    perc.append(alone);
  }
  if (shown && head.label) {
    // rated outside the ratings the model was validated on: the number, and why to doubt it
    perc.append(el("span", { class: "d range-note", testid: `${color}-headline-note` }, head.label));
  }
  row.append(who, perc);
  return row;
}

function card(s, entry) {
  const st = entry.state;
  const live = s.result === "*";
  const c = el("article", { class: "panel card", testid: "board-card" });
  c.dataset.boardId = s.board_id;
  c.dataset.live = live ? "true" : "false";
  c.append(el("div", { class: "no", testid: "board-no" }, s.board ?? ""));
  c.append(playerRow("white", s), playerRow("black", s));
  const { ev, pending } = st ? displayEval(st) : { ev: s.eval, pending: false };
  const bar = el("div", { class: "bar live-value", "data-widget": "eval", testid: "eval-bar" });
  bar.dataset.pending = pending ? "true" : "false";
  const share = whiteShare(ev);
  const fill = el("div", { class: "evalbar-white" });
  fill.style.width = `${(share * 100).toFixed(2)}%`;
  const cp = el("span", { class: "cp", testid: "eval-cp" }, evalText(ev));
  cp.dataset.cp = ev ? String(ev.cp) : "";
  cp.dataset.side = share >= 0.5 ? "white" : "black";
  bar.append(fill, cp);
  c.append(bar);
  const res = el("div", { class: "res" });
  res.append(el("span", { class: "r", testid: "result" }, live ? "LIVE" : s.result));
  const moveNo = Math.ceil((s.plies || 0) / 2);
  res.append(el("span", { class: "ply", testid: "plies" }, s.plies ? `move ${moveNo}` : "not started"));
  c.append(res);
  return c;
}

// Snapshots come one message each (a round of 250 boards: 250 of them); every
// card is rebuilt at most once per animation frame, not once per message.
let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    render();
  });
}

function render() {
  const list = visible();
  const first = list[0];
  setText(root, "event", filterTournament || (first && first.tournament) || "All boards");
  const rounds = [...new Set(list.map((s) => s.round).filter(Boolean))];
  setText(root, "round", rounds.length === 1 ? `Round ${rounds[0]}` : "");
  setText(root, "board-count", `${list.length} board${list.length === 1 ? "" : "s"}`);
  const n = cols > 0 ? cols : list.length > 24 ? 3 : list.length > 8 ? 2 : 1;
  grid.style.setProperty("--cols", String(n));
  // one board per row, filling the screen, while there are few boards
  grid.dataset.rows = n === 1 && list.length <= 8 ? "fill" : "auto";
  grid.replaceChildren(...list.map((s) => card(s, boards.get(s.board_id))));
  applyWidgetParams(grid);
  byTestId(root, "boards-empty").hidden = list.length > 0;
  paginate();
  renderStatus();
}

function paginate() {
  const cards = [...grid.children];
  for (const c of cards) c.hidden = false;
  pages = 1;
  if (cards.length && cycle > 0) {
    const style = getComputedStyle(grid);
    const gap = parseFloat(style.rowGap) || 0;
    const ncols = style.gridTemplateColumns.split(" ").filter(Boolean).length || 1;
    const cardHeight = Math.max(...cards.map((c) => c.getBoundingClientRect().height));
    const rows = Math.max(1, Math.floor((grid.clientHeight + gap) / (cardHeight + gap)));
    const per = rows * ncols;
    pages = Math.ceil(cards.length / per);
    if (pageNo >= pages) pageNo = 0;
    cards.forEach((c, i) => {
      c.hidden = Math.floor(i / per) !== pageNo;
    });
  }
  const label = byTestId(root, "page");
  label.textContent = pages > 1 ? `page ${pageNo + 1}/${pages}` : "";
  label.dataset.page = String(pageNo + 1);
  label.dataset.pages = String(pages);
}

if (cycle > 0) {
  setInterval(() => {
    if (pages > 1) {
      pageNo = (pageNo + 1) % pages;
      paginate();
    }
  }, cycle * 1000);
}
new ResizeObserver(() => paginate()).observe(grid);

conn.start();
