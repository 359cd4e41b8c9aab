// The key moments widget (widget-moments.html): the latest key moments across all
// boards (a blunder, a missed win, a turnaround, time trouble, a game's end), newest first, as the
// server sends them (`moment` messages; docs/maths.md, "Key moments").
// URL parameters: rows=N (default 8), boards=ID,ID (only these; default every board),
// theme, bg, scale, show/hide (title). See docs/obs.md.
import { LiveConnection, applyPageParams, applyWidgetParams, byTestId, el, param } from "./lib.js";

const KIND_TEXT = {
  blunder: "Blunder",
  "missed-win": "Missed win",
  turnaround: "Turnaround",
  "game-end": "Game over",
  "time-trouble": "Time trouble",
};

/** "3…Nf6" for ply 6, "4.Qxf7#" for ply 7. */
export function moveText(ply, san) {
  if (!san || !ply) return "";
  const n = Math.ceil(ply / 2);
  return ply % 2 ? `${n}.${san}` : `${n}…${san}`;
}

/** White's chances before and after, in percent: "52 % → 0 %"; time trouble: the
 * clock left ("4:50 left"); "" when unknown. */
export function swingText(m) {
  if (m.kind === "time-trouble") {
    if (m.clock === null || m.clock === undefined) return "";
    const s = Math.max(0, Math.round(m.clock));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left`;
  }
  if (m.before === null || m.before === undefined || m.after === null || m.after === undefined) return "";
  return `${Math.round(m.before * 100)} % → ${Math.round(m.after * 100)} %`;
}

function row(m) {
  const li = el("li", { class: "moment", testid: "moment" });
  li.dataset.kind = m.kind;
  li.dataset.board = m.board_id;
  li.dataset.ply = String(m.ply);
  const kind = m.kind === "game-end" && m.result ? `${KIND_TEXT[m.kind]} ${m.result}` : KIND_TEXT[m.kind] || m.kind;
  li.append(el("span", { class: "moment-kind", testid: "moment-kind" }, kind));
  const move = el("span", { testid: "moment-line" });
  move.append(el("span", { class: "moment-move", testid: "moment-move" }, moveText(m.ply, m.move)));
  if (m.best && m.kind !== "game-end") {
    move.append(el("span", { class: "moment-best", testid: "moment-best" }, `best ${m.best}`));
  }
  li.append(move);
  li.append(el("span", { class: "moment-swing", testid: "moment-swing", title: "White's chances" }, swingText(m)));
  const where = [m.board ? `Bd ${m.board}` : null, `${m.white} – ${m.black}`].filter(Boolean).join(" · ");
  li.append(el("span", { class: "moment-players", testid: "moment-players" }, where));
  return li;
}

function start() {
  applyPageParams({ bg: "transparent" });
  applyWidgetParams();
  const root = document.querySelector("main");
  const n = Number(param("rows", "8"));
  const limit = Number.isFinite(n) && n > 0 ? n : 8;
  const only = param("boards");
  const boards = only ? only.split(",").map((s) => s.trim()).filter(Boolean) : "*";
  const list = byTestId(root, "moments-list");
  const seen = new Set();
  let count = 0;

  const conn = new LiveConnection({
    onState(s) {
      root.dataset.fresh = s === "live" ? "true" : "false";
    },
    onOpen() {
      conn.send({ type: "subscribe", boards });
    },
    moment(m) {
      const key = `${m.board_id}/${m.ply}/${m.kind}`;
      if (seen.has(key)) return; // the same moment again (a reconnection)
      seen.add(key);
      list.prepend(row(m));
      while (list.children.length > limit) list.lastElementChild.remove();
      count += 1;
      root.dataset.count = String(count);
      byTestId(root, "waiting").hidden = true;
    },
    error(msg) {
      console.warn("livegain server error:", msg.message);
    },
  });
  conn.start();
}

if (typeof document !== "undefined" && document.querySelector("main[data-testid=widget]")) start();
