// Following one board, live: the connection, the board list (which board to show,
// and whether it exists), the snapshot and its updates, gaps in the sequence
// numbers (a fresh snapshot is asked for). Used by the board overlay and by the
// standalone widget pages.
import { BoardList, LiveConnection, applyUpdate, renderDelay } from "./lib.js";

/**
 * Follows the board `boardId` (null: the first board of the list) and calls
 * `render(state)` with the whole BoardState after its snapshot and after every
 * update; `freshness(connState, fresh, state)` whenever the connection or the
 * freshness of the figures changes; `waiting(text | null)` while there is no
 * board to show. `root` gets data-fresh and the counters data-snapshots,
 * data-updates and data-gaps (for tests and troubleshooting).
 */
export class BoardFollower {
  constructor({ root, boardId = null, render, freshness = () => {}, waiting = () => {} }) {
    this.root = root;
    this.boardId = boardId;
    this.onRender = render;
    this.onFreshness = freshness;
    this.onWaiting = waiting;
    this.state = null;
    this.fresh = false;
    this.connState = "connecting";
    this.counts = { snapshots: 0, updates: 0, gaps: 0 };
    this.helloSeen = false;

    this.conn = new LiveConnection({
      onState: (s) => {
        this.connState = s;
        if (s !== "live") this.fresh = false;
        this.freshnessChanged();
      },
      onOpen: () => {
        this.fresh = false;
        this.freshnessChanged();
        if (this.boardId) this.subscribe();
      },
      snapshot: (msg) => {
        if (!msg.state || msg.state.board_id !== this.boardId) return;
        this.state = msg.state; // a fresh object from JSON.parse: no copy needed
        this.count("snapshots");
        this.fresh = true;
        this.onWaiting(null);
        this.onRender(this.state);
        renderDelay(this.root, this.state);
        this.freshnessChanged();
      },
      update: (msg) => {
        if (!this.state || msg.board_id !== this.boardId) return;
        const r = applyUpdate(this.state, msg);
        if (r === "gap") {
          this.count("gaps");
          this.fresh = false;
          this.freshnessChanged();
          this.resubscribe();
          return;
        }
        if (r === "ok") {
          this.count("updates");
          this.onRender(this.state);
          renderDelay(this.root, this.state);
          this.freshnessChanged();
        }
      },
      error: (msg) => {
        console.warn("livegain server error:", msg.message);
      },
    });

    // the board list (paged, then kept current by diffs): which board to show, and
    // whether the one asked for exists
    const boardList = new BoardList((l, removed) => this.listChanged(l, removed));
    Object.assign(this.conn.handlers, boardList.handlers(this.conn));
    const listHello = this.conn.handlers.hello;
    this.conn.handlers.hello = (msg) => {
      this.helloSeen = false;
      listHello(msg);
    };
  }

  start() {
    this.conn.start();
  }

  count(k) {
    this.counts[k] += 1;
    this.root.dataset[k] = String(this.counts[k]);
  }

  listChanged(l, removed) {
    const first = !this.helloSeen;
    this.helloSeen = true;
    if (!this.boardId) {
      if (!l.complete) return; // the first board of the whole list, not of a page
      const pick = pickFirst(l.list());
      if (pick) {
        this.boardId = pick;
        this.subscribe();
      } else {
        this.onWaiting("Waiting for a board…");
      }
    } else if (removed.includes(this.boardId)) {
      this.state = null;
      this.fresh = false;
      this.freshnessChanged();
      this.onWaiting(`Board ${this.boardId} was removed`);
    } else if (l.has(this.boardId)) {
      if (!this.state && !first) this.subscribe();
    } else if (l.complete) {
      this.onWaiting(`Waiting for board ${this.boardId}…`);
    }
  }

  subscribe() {
    this.conn.send({ type: "subscribe", boards: [this.boardId] });
  }

  resubscribe() {
    this.conn.send({ type: "unsubscribe", boards: [this.boardId] });
    this.conn.send({ type: "subscribe", boards: [this.boardId] });
  }

  freshnessChanged() {
    const live = this.connState === "live" && this.fresh;
    this.root.dataset.fresh = live ? "true" : "false";
    this.onFreshness(this.connState, this.fresh, this.state);
  }
}

/** The first board of a list, in tournament, round and board order. */
export function pickFirst(boards) {
  const sorted = [...boards].sort(
    (a, b) =>
      String(a.tournament ?? "").localeCompare(String(b.tournament ?? "")) ||
      String(a.round ?? "").localeCompare(String(b.round ?? ""), undefined, { numeric: true }) ||
      (a.board ?? 0) - (b.board ?? 0),
  );
  return sorted.length ? sorted[0].board_id : null;
}
