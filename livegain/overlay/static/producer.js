// The producer's view (/overlay/producer, for the crew, not for stream): every
// board ranked by how much it deserves the camera now, as the server ranks them
// (GET /api/producer; the rule is core/producer.py, docs/producer.md), polled
// every `poll` seconds (default 2), with the reason and a button that copies the
// board's overlay URL.
import { el, param } from "./lib.js";

const root = document.querySelector("main");
const rows = root.querySelector('[data-testid="producer-rows"]');
const empty = root.querySelector('[data-testid="producer-empty"]');
const updated = root.querySelector('[data-testid="producer-updated"]');
const seconds = Number(param("poll", "2"));
const pollMs = Math.max(0.2, Number.isFinite(seconds) ? seconds : 2) * 1000;
let polls = 0;

/** The board overlay's absolute URL (what an OBS browser source takes). */
export function overlayUrl(path) {
  return new URL(path, location.origin).href;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // no clipboard permission (plain http, old browser): select it for Ctrl+C
    const input = el("input", { class: "producer-url", value: text, readonly: "" });
    button.after(input);
    input.select();
    document.execCommand("copy");
  }
  button.textContent = "Copied";
  button.dataset.copied = "true";
  setTimeout(() => {
    button.textContent = "Copy URL";
    button.dataset.copied = "false";
  }, 2000);
}

function row(b) {
  const tr = el("tr", { testid: "producer-row", class: "producer-row" });
  tr.dataset.board = b.board_id;
  tr.dataset.rank = String(b.rank);
  tr.dataset.score = String(b.score);
  tr.dataset.term = b.terms.length ? b.terms[0].name : "";
  const where = [b.round ? `R${b.round}` : null, b.board ? `Bd ${b.board}` : null].filter(Boolean).join(" · ");
  tr.append(el("td", { testid: "producer-rank" }, String(b.rank)));
  tr.append(el("td", { testid: "producer-where" }, where || b.board_id));
  const game = `${b.white} – ${b.black}${b.result !== "*" ? ` ${b.result}` : ""}`;
  tr.append(el("td", { testid: "producer-game" }, game));
  const why = el("td", { testid: "producer-reason", title: b.terms.map((t) => t.reason).join("\n") }, b.reason);
  tr.append(why);
  tr.append(el("td", { testid: "producer-score" }, b.score.toFixed(2)));
  const url = overlayUrl(b.overlay);
  const button = el("button", { type: "button", testid: "producer-copy", title: url }, "Copy URL");
  button.dataset.url = url;
  button.addEventListener("click", () => copy(url, button));
  const cell = el("td");
  cell.append(button);
  tr.append(cell);
  return tr;
}

async function poll() {
  try {
    const r = await fetch("/api/producer", { cache: "no-store" });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const data = await r.json();
    // a button being clicked keeps its row: only re-render when the ranking changed
    const key = JSON.stringify(data.boards.map((b) => [b.board_id, b.rank, b.score, b.reason, b.result]));
    if (key !== rows.dataset.key) {
      rows.replaceChildren(...data.boards.map(row));
      rows.dataset.key = key;
    }
    empty.hidden = data.boards.length > 0;
    updated.textContent = `updated ${new Date(data.at_ms).toLocaleTimeString()}`;
    root.dataset.state = "ok";
  } catch (e) {
    root.dataset.state = "error";
    updated.textContent = `cannot reach the server (${e.message})`;
  }
  polls += 1;
  root.dataset.polls = String(polls);
  setTimeout(poll, pollMs);
}

poll();
