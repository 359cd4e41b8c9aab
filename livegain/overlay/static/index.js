// Index page: tournaments and boards with ready-to-copy overlay URLs and a live preview.
import { BoardList, LiveConnection, applyPageParams, byTestId, el } from "./lib.js";

applyPageParams();

const root = document.querySelector(".wrap");
const form = byTestId(root, "picker");
const WIDGETS = [
  ["header", "header"],
  ["players", "players"],
  ["perceived", "ratings (form, moves alone)"],
  ["clocks", "clocks"],
  ["eval", "eval bar"],
  ["wdl", "win/draw/loss"],
  ["board", "board"],
  ["graph", "winning chances graph"],
  ["trace", "rating trace"],
  ["h2h", "head-to-head"],
  ["lastmove", "last move"],
  ["moves", "move list"],
  ["odds", "match odds"],
  ["status", "live badge"],
  ["engine", "engine line"],
];
const fieldset = byTestId(root, "pick-widgets");
for (const [name, label] of WIDGETS) {
  const box = el("input", { type: "checkbox", name: `w-${name}`, checked: true });
  box.dataset.widget = name;
  const lab = el("label");
  lab.append(box, document.createTextNode(` ${label}`));
  fieldset.append(lab);
}

let summaries = [];
let selected = null; // { kind: "board", id } | { kind: "boards", tournament, round } | { kind: "standings" | "players", tournament }

function options() {
  const fd = new FormData(form);
  const hide = WIDGETS.map(([n]) => n).filter((n) => !fd.get(`w-${n}`));
  return {
    layout: fd.get("layout") || "full",
    theme: fd.get("theme") || "dark",
    rating: fd.get("rating") === "algorithm4" ? "algorithm4" : "calibrated",
    transparent: Boolean(fd.get("transparent")),
    hide,
  };
}

function boardUrl(id) {
  const o = options();
  const u = new URL("overlay/board", location.href);
  u.search = "";
  u.searchParams.set("board", id);
  if (o.layout !== "full") u.searchParams.set("layout", o.layout);
  if (o.theme !== "dark") u.searchParams.set("theme", o.theme);
  if (o.rating !== "calibrated") u.searchParams.set("rating", o.rating);
  if (o.transparent) u.searchParams.set("bg", "transparent");
  if (o.hide.length) u.searchParams.set("hide", o.hide.join(","));
  return u.href;
}

function boardsUrl(tournament, round) {
  const o = options();
  const u = new URL("overlay/boards", location.href);
  u.search = "";
  if (tournament) u.searchParams.set("tournament", tournament);
  if (round) u.searchParams.set("round", round);
  if (o.theme !== "dark") u.searchParams.set("theme", o.theme);
  if (o.rating !== "calibrated") u.searchParams.set("rating", o.rating);
  if (o.transparent) u.searchParams.set("bg", "transparent");
  return u.href;
}

function standingsUrl(tournament, widget = "standings") {
  const o = options();
  const u = new URL(`overlay/static/widget-${widget}.html`, location.href);
  u.search = "";
  u.searchParams.set("event", tournament);
  if (o.theme !== "dark") u.searchParams.set("theme", o.theme);
  u.searchParams.set("bg", o.transparent ? "transparent" : "solid");
  return u.href;
}

async function copy(input, button) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(input.value);
    ok = true;
  } catch {
    input.select();
    ok = document.execCommand && document.execCommand("copy");
  }
  button.textContent = ok ? "Copied" : "Select + Ctrl+C";
  setTimeout(() => {
    button.textContent = "Copy";
  }, 1500);
}

function urlRow(url, testid, onPreview) {
  const wrap = el("div", { class: "url" });
  const input = el("input", { type: "text", readonly: true, value: url, testid });
  input.value = url;
  input.addEventListener("focus", () => input.select());
  const c = el("button", { type: "button", class: "secondary" }, "Copy");
  c.addEventListener("click", () => copy(input, c));
  const p = el("button", { type: "button" }, "Preview");
  p.addEventListener("click", onPreview);
  wrap.append(input, c, p);
  return wrap;
}

function groupKey(s) {
  return `${s.tournament ?? ""}\u0000${s.round ?? ""}`;
}

function render() {
  const list = byTestId(root, "tournament-list");
  list.replaceChildren();
  byTestId(root, "no-boards").hidden = summaries.length > 0;
  const groups = new Map();
  const sorted = [...summaries].sort(
    (a, b) =>
      String(a.tournament ?? "").localeCompare(String(b.tournament ?? "")) ||
      String(a.round ?? "").localeCompare(String(b.round ?? ""), undefined, { numeric: true }) ||
      (a.board ?? 1e9) - (b.board ?? 1e9),
  );
  for (const s of sorted) {
    const k = groupKey(s);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(s);
  }
  for (const boards of groups.values()) {
    const { tournament, round } = boards[0];
    const sec = el("div", { class: "tournament", testid: "tournament" });
    const title = [tournament || "Untitled event", round ? `round ${round}` : ""].filter(Boolean).join(" · ");
    sec.append(el("h2", { testid: "tournament-name" }, title));
    const allRow = el("div", { class: "board-row", testid: "all-boards-row" });
    allRow.append(el("span", { class: "no" }, "∗"), el("span", { class: "pair" }, "All boards (multi-board view)"), el("span"));
    allRow.append(
      urlRow(boardsUrl(tournament, round), "boards-url", () => {
        selected = { kind: "boards", tournament, round };
        preview();
      }),
    );
    sec.append(allRow);
    if (tournament) {
      // the event's standings and chances of first place (docs/standings.md)
      const stRow = el("div", { class: "board-row", testid: "standings-row" });
      stRow.append(el("span", { class: "no" }, "≡"), el("span", { class: "pair" }, "Standings and odds (widget)"), el("span"));
      stRow.append(
        urlRow(standingsUrl(tournament), "standings-url", () => {
          selected = { kind: "standings", tournament };
          preview();
        }),
      );
      sec.append(stRow);
      // its player table: performance, rating change, perceived, accuracy
      const plRow = el("div", { class: "board-row", testid: "players-row" });
      plRow.append(el("span", { class: "no" }, "≡"), el("span", { class: "pair" }, "Player table (widget)"), el("span"));
      plRow.append(
        urlRow(standingsUrl(tournament, "players"), "players-url", () => {
          selected = { kind: "players", tournament };
          preview();
        }),
      );
      sec.append(plRow);
    }
    for (const s of boards) {
      const row = el("div", { class: "board-row", testid: "board-row" });
      row.dataset.boardId = s.board_id;
      row.dataset.selected = selected && selected.kind === "board" && selected.id === s.board_id ? "true" : "false";
      const pair = el("span", { class: "pair" });
      pair.append(
        el("span", { testid: "white-name" }, s.white.name),
        document.createTextNode(" – "),
        el("span", { testid: "black-name" }, s.black.name),
        el("span", { class: "res", testid: "result" }, s.result === "*" ? "live" : s.result),
      );
      row.append(el("span", { class: "no" }, s.board ?? ""), pair, el("span", { class: "muted" }, s.plies ? `move ${Math.ceil(s.plies / 2)}` : "not started"));
      row.append(
        urlRow(boardUrl(s.board_id), "board-url", () => {
          selected = { kind: "board", id: s.board_id };
          preview();
          render();
        }),
      );
      sec.append(row);
    }
    list.append(sec);
  }
}

function preview() {
  const frame = byTestId(root, "preview");
  if (!selected && summaries.length) selected = { kind: "board", id: summaries[0].board_id };
  if (!selected) return;
  const url =
    selected.kind === "board"
      ? boardUrl(selected.id)
      : selected.kind === "standings" || selected.kind === "players"
        ? standingsUrl(selected.tournament, selected.kind)
        : boardsUrl(selected.tournament, selected.round);
  if (frame.getAttribute("src") !== url) frame.setAttribute("src", url);
  byTestId(root, "preview-url").textContent = url;
  fit();
}

function fit() {
  const box = byTestId(root, "preview-frame");
  const frame = byTestId(root, "preview");
  frame.style.transform = `scale(${box.clientWidth / 1920})`;
}

const SIZES = { full: "1920 × 1080", compact: "520 × 1080", "lower-third": "1920 × 280", corner: "560 × 720" };

function sizeHint() {
  byTestId(root, "size-hint").textContent = SIZES[options().layout] || SIZES.full;
}

form.addEventListener("change", () => {
  sizeHint();
  render();
  preview();
});
new ResizeObserver(fit).observe(byTestId(root, "preview-frame"));

const conn = new LiveConnection({
  onState(s) {
    root.dataset.fresh = s === "live" ? "true" : "false";
    const st = byTestId(root, "status");
    st.dataset.state = s;
    st.textContent = s === "live" ? "LIVE" : s === "reconnecting" ? "RECONNECTING…" : "CONNECTING…";
  },
});
// the list comes in pages and changes: one render per animation frame at most
let pending = false;
const list = new BoardList((l) => {
  summaries = l.list();
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    render();
    preview();
  });
});
Object.assign(conn.handlers, list.handlers(conn));
conn.start();
