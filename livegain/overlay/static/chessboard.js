// The chessboard widget: the position of a FEN drawn by the page as SVG (pieces are
// paths of the project's own, no image files, no fonts), the last move's squares
// marked, optionally flipped, with the material each side has captured (from the
// FEN against the initial set) and the material difference ("+3").
//
//   import { renderBoard } from "./chessboard.js";
//   renderBoard(container, { fen, lastMove: "e2e4", flip: false });
//
// Every square carries data-square ("e4"); every piece data-square and data-piece
// (the FEN letter: "P" a white pawn, "q" a black queen), so what is drawn can be
// read back from the DOM.
import { param, svg } from "./lib.js";

const FILES = "abcdefgh";
const SQ = 45; // one square, in the pieces' own units

/** The initial set of each side, and the usual values of the pieces. */
export const INITIAL = { p: 8, n: 2, b: 2, r: 2, q: 1, k: 1 };
export const VALUES = { p: 1, n: 3, b: 3, r: 5, q: 9, k: 0 };
/** The order captured pieces are listed in (most valuable first). */
const ORDER = ["q", "r", "b", "n", "p"];

/**
 * Whether the page shows the board from Black's side: URL parameter `flip` (1, true,
 * yes) or `side=black`.
 */
export function boardFlipped() {
  const flip = String(param("flip", "")).toLowerCase();
  return ["1", "true", "yes"].includes(flip) || String(param("side", "")).toLowerCase() === "black";
}

// ---------------------------------------------------------------- pieces
//
// Each piece is a list of [kind, path] in a 45 x 45 box: "body" is filled with the
// piece's colour and outlined, "line" is a detail stroked in the contrasting colour,
// "dot" a detail filled with it. Drawn for this project (Staunton-like silhouettes).

const BASE = "M11.5 39.5h22a1.5 1.5 0 0 0 1.5-1.5v-1a2 2 0 0 0-2-2H12a2 2 0 0 0-2 2v1a1.5 1.5 0 0 0 1.5 1.5z";
const SMALL_BASE = "M14 39.5h17a1.5 1.5 0 0 0 1.5-1.5v-1a2 2 0 0 0-2-2h-16a2 2 0 0 0-2 2v1a1.5 1.5 0 0 0 1.5 1.5z";

const PIECES = {
  p: [
    [
      "body",
      "M22.5 9a4.6 4.6 0 0 0-3.3 7.8c-2.1 1.2-3.5 3.4-3.5 5.9 0 2 .9 3.8 2.3 5-3 1.6-5 4.2-5.4 7.3h19.8" +
        "c-.4-3.1-2.4-5.7-5.4-7.3 1.4-1.2 2.3-3 2.3-5 0-2.5-1.4-4.7-3.5-5.9A4.6 4.6 0 0 0 22.5 9z",
    ],
    ["body", SMALL_BASE],
  ],
  r: [
    ["body", "M12 9.5h4v3h4v-3h5v3h4v-3h4V16l-2 2.5v11l2.5 3V35h-22v-2.5l2.5-3v-11L12 16z"],
    ["body", BASE],
    ["line", "M12.5 16h20M14.5 29.5h16"],
  ],
  n: [
    [
      "body",
      "M14 35c0-4.6 2.6-8.2 6-11.3-2.7.9-5.4 2.4-7.6 4.7-1 1-2.2 1.4-3.4.8-1.5-.8-2.6-2.3-2.2-4" +
        ".4.4-2 1.7-3.6 3-5.3 1.6-2 2.7-3.7 3.3-5.9l-.2-5.1 3.6 2.9 1.7-3.5 2.6 3.4c8.5.6 15.8 6.5 15.6" +
        " 18.4-.1 4.4-1 7.5-2.2 9.8z",
    ],
    ["body", BASE],
    ["dot", "M12.6 17.4a1.3 1.3 0 1 0 2.6 0 1.3 1.3 0 1 0-2.6 0z"],
    ["line", "M24.5 12.2c5.6 1.6 9.4 6.6 9.6 13.6M8.6 24.8l1.6-.4"],
  ],
  b: [
    ["body", "M20.2 8.2a2.3 2.3 0 1 0 4.6 0 2.3 2.3 0 1 0-4.6 0z"],
    [
      "body",
      "M22.5 10.6c-4.6 3-7.6 7.2-7.6 11 0 2.8 1.5 4.6 3.5 5.4h8.2c2-.8 3.5-2.6 3.5-5.4 0-3.8-3-8-7.6-11z",
    ],
    ["body", "M17.2 27h10.6a1.3 1.3 0 0 1 0 2.6H17.2a1.3 1.3 0 0 1 0-2.6z"],
    ["body", "M18.2 29.6c-.3 2.4-1.6 4.2-3.6 5.4h15.8c-2-1.2-3.3-3-3.6-5.4z"],
    ["body", BASE],
    ["line", "M22.5 15.2v6.2M19.5 18.3h6"],
  ],
  q: [
    ["body", "M10.5 30 8 15.5l6.2 8.3 1-11.6 4.3 10.6 3-12.3 3 12.3 4.3-10.6 1 11.6 6.2-8.3L34.5 30z"],
    ["body", "M10.5 30c1.2 1.5 1.6 3.2 1.1 5h21.8c-.5-1.8-.1-3.5 1.1-5-7.6-1.3-16.4-1.3-24 0z"],
    ["body", BASE],
    ["body", "M5.8 13.5a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0z"],
    ["body", "M13 10.5a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0z"],
    ["body", "M20.3 8.6a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0z"],
    ["body", "M27.6 10.5a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0z"],
    ["body", "M34.8 13.5a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0z"],
    ["line", "M12.2 30.6c6.8-.9 13.8-.9 20.6 0"],
  ],
  k: [
    ["body", "M21.2 4h2.6v2.6h2.6v2.6h-2.6v3.4h-2.6V9.2h-2.6V6.6h2.6z"],
    [
      "body",
      "M22.5 12.6c-1.9 0-3.4 1.6-3.4 3.6 0 1.6.7 3 1.6 4.2-4-3.7-11.6-3-12.4 2.6-.6 4 2.6 7 5.5 9" +
        "V35h17.4v-3c2.9-2 6.1-5 5.5-9-.8-5.6-8.4-6.3-12.4-2.6.9-1.2 1.6-2.6 1.6-4.2 0-2-1.5-3.6-3.4-3.6z",
    ],
    ["body", BASE],
    ["line", "M13.8 32c5.6-2 12-2 17.4 0M22.5 20.4v6"],
  ],
};

/** One piece as an SVG group at the origin of a 45 x 45 box; `letter` is the FEN letter. */
export function pieceGroup(letter) {
  const white = letter === letter.toUpperCase();
  const g = svg("g", { class: `cb-piece ${white ? "white" : "black"}` });
  for (const [kind, d] of PIECES[letter.toLowerCase()] || []) {
    g.append(svg("path", { d, class: `cb-${kind}` }));
  }
  return g;
}

// ---------------------------------------------------------------- FEN

/**
 * The pieces of a FEN: a Map square ("e4") -> FEN letter, and the side to move;
 * null for a placement that cannot be read (the board is then drawn empty).
 */
export function parseFen(fen) {
  if (typeof fen !== "string") return null;
  const [placement, turn] = fen.trim().split(/\s+/);
  const ranks = (placement || "").split("/");
  if (ranks.length !== 8) return null;
  const pieces = new Map();
  for (let r = 0; r < 8; r++) {
    let file = 0;
    for (const ch of ranks[r]) {
      if (/[1-8]/.test(ch)) file += Number(ch);
      else if (/[pnbrqk]/i.test(ch)) {
        if (file > 7) return null;
        pieces.set(`${FILES[file]}${8 - r}`, ch);
        file += 1;
      } else return null;
    }
    if (file !== 8) return null;
  }
  return { pieces, turn: turn === "b" ? "black" : "white" };
}

/** The two squares of a UCI move ("e2e4", "e7e8q"), or null. */
export function moveSquares(uci) {
  const m = /^([a-h][1-8])([a-h][1-8])/.exec(String(uci || ""));
  return m ? [m[1], m[2]] : null;
}

/**
 * Material from a FEN. For each side: `captured`, the opponent's pieces missing from
 * the board against the initial set (a list of lower-case letters, most valuable
 * first: the pieces this side has taken), and `points`, the value of its own pieces
 * on the board. A piece beyond the initial set (a promotion) is counted as a pawn
 * gone from its side, not as a pawn captured. `diff` is White's points minus
 * Black's (the "+3").
 */
export function material(fen) {
  const parsed = parseFen(fen);
  const count = { white: {}, black: {} };
  for (const side of ["white", "black"]) for (const t of Object.keys(INITIAL)) count[side][t] = 0;
  if (parsed) {
    for (const letter of parsed.pieces.values()) {
      const side = letter === letter.toUpperCase() ? "white" : "black";
      count[side][letter.toLowerCase()] += 1;
    }
  }
  const missing = (side) => {
    const c = count[side];
    let promoted = 0;
    for (const t of ["n", "b", "r", "q"]) promoted += Math.max(0, c[t] - INITIAL[t]);
    const out = [];
    for (const t of ORDER) {
      const gone = t === "p" ? INITIAL.p - c.p - promoted : INITIAL[t] - c[t];
      for (let i = 0; i < gone; i++) out.push(t);
    }
    return out;
  };
  const points = (side) => Object.entries(count[side]).reduce((s, [t, n]) => s + VALUES[t] * n, 0);
  const white = { captured: missing("black"), points: points("white") };
  const black = { captured: missing("white"), points: points("black") };
  return { white, black, diff: white.points - black.points };
}

// ---------------------------------------------------------------- drawing

/** Square name -> its top-left corner in board units, as seen from White (or Black when flipped). */
function corner(square, flip) {
  const f = FILES.indexOf(square[0]);
  const r = Number(square[1]) - 1;
  return flip ? [(7 - f) * SQ, r * SQ] : [f * SQ, (7 - r) * SQ];
}

function boardSvg({ pieces, last, flip, coords, check }) {
  const root = svg("svg", {
    viewBox: `0 0 ${8 * SQ} ${8 * SQ}`,
    class: "cb-svg",
    role: "img",
    "aria-label": "chessboard",
    testid: "board-svg",
    "data-flip": flip ? "true" : "false",
  });
  const squares = svg("g", { class: "cb-squares" });
  for (let r = 1; r <= 8; r++) {
    for (let f = 0; f < 8; f++) {
      const sq = `${FILES[f]}${r}`;
      const [x, y] = corner(sq, flip);
      const light = (f + r) % 2 === 0; // a1 is dark
      squares.append(
        svg("rect", {
          x,
          y,
          width: SQ,
          height: SQ,
          class: light ? "cb-sq light" : "cb-sq dark",
          "data-square": sq,
        }),
      );
    }
  }
  root.append(squares);
  for (const sq of last || []) {
    const [x, y] = corner(sq, flip);
    root.append(
      svg("rect", { x, y, width: SQ, height: SQ, class: "cb-last", testid: "board-lastmove", "data-square": sq }),
    );
  }
  if (check) {
    const [x, y] = corner(check, flip);
    root.append(
      svg("circle", { cx: x + SQ / 2, cy: y + SQ / 2, r: SQ * 0.48, class: "cb-check", "data-square": check }),
    );
  }
  if (coords) {
    const g = svg("g", { class: "cb-coords" });
    for (let i = 0; i < 8; i++) {
      // files along the bottom edge, ranks along the left edge, in the contrasting square colour
      const file = flip ? FILES[7 - i] : FILES[i];
      const ft = svg("text", {
        x: i * SQ + SQ - 2.5,
        y: 8 * SQ - 3,
        class: i % 2 === 0 ? "cb-coord on-dark" : "cb-coord on-light", // the corner square is dark
        "text-anchor": "end",
      });
      ft.textContent = file;
      const rank = flip ? i + 1 : 8 - i;
      const rt = svg("text", {
        x: 2.5,
        y: i * SQ + 11,
        class: i % 2 === 0 ? "cb-coord on-light" : "cb-coord on-dark",
      });
      rt.textContent = String(rank);
      g.append(ft, rt);
    }
    root.append(g);
  }
  const layer = svg("g", { class: "cb-pieces" });
  for (const [sq, letter] of pieces) {
    const [x, y] = corner(sq, flip);
    const g = pieceGroup(letter);
    g.setAttribute("transform", `translate(${x} ${y})`);
    g.setAttribute("data-testid", "board-piece");
    g.setAttribute("data-square", sq);
    g.setAttribute("data-piece", letter);
    layer.append(g);
  }
  root.append(layer);
  return root;
}

/** One side's row: the pieces it has captured, as small pieces, and "+N" when it is ahead. */
function capturedRow(side, mat) {
  const row = document.createElement("div");
  row.className = `cb-captured ${side}`;
  row.dataset.testid = `captured-${side}`;
  const mine = mat[side];
  // what this side took is drawn in the opponent's colour
  row.dataset.pieces = mine.captured.join("");
  const icons = svg("svg", { class: "cb-captured-pieces", "aria-hidden": "true" });
  // pieces of a kind overlap, kinds stand apart
  let x = 0;
  let prev = null;
  for (const t of mine.captured) {
    if (prev !== null) x += prev === t ? 17 : 34;
    const g = pieceGroup(side === "white" ? t : t.toUpperCase());
    g.setAttribute("transform", `translate(${x} 0)`);
    icons.append(g);
    prev = t;
  }
  if (prev !== null) x += SQ;
  icons.setAttribute("viewBox", `0 0 ${Math.max(SQ, x)} ${SQ}`);
  row.append(icons);
  const lead = side === "white" ? mat.diff : -mat.diff;
  const diff = document.createElement("span");
  diff.className = "cb-diff";
  diff.dataset.testid = `material-${side}`;
  diff.textContent = lead > 0 ? `+${lead}` : "";
  row.append(diff);
  return row;
}

/** Sizes the board to the largest square that fits the container, the rows to its width. */
function fit(container) {
  const board = container.querySelector(".cb-board");
  if (!board) return;
  const rows = [...container.querySelectorAll(".cb-captured")];
  const rowsHeight = rows.reduce((s, r) => s + r.offsetHeight, 0);
  const side = Math.floor(Math.min(container.clientWidth, container.clientHeight - rowsHeight));
  if (side <= 0) return;
  board.style.width = `${side}px`;
  board.style.height = `${side}px`;
  for (const r of rows) r.style.width = `${side}px`;
}

const observed = new WeakSet();

/**
 * Draws the board of `fen` into `container` (replacing what was there).
 * Options: lastMove (UCI, e.g. "e2e4": its two squares are marked), flip (Black at
 * the bottom), coords (file and rank letters; default true), captured (the rows of
 * captured material above and below the board; default true), check (a square to
 * mark as a king in check). The board takes the largest square the container holds
 * and follows its size.
 */
export function renderBoard(
  container,
  { fen, lastMove = null, flip = false, coords = true, captured = true, check = null } = {},
) {
  const key = JSON.stringify([fen, lastMove, flip, coords, captured, check]);
  if (container.dataset.drawn === key && container.querySelector(".cb-board")) {
    fit(container);
    return;
  }
  container.dataset.drawn = key;
  const parsed = parseFen(fen);
  const pieces = parsed ? parsed.pieces : new Map();
  const mat = material(fen);
  const board = document.createElement("div");
  board.className = "cb-board";
  board.append(boardSvg({ pieces, last: moveSquares(lastMove), flip, coords, check }));
  container.classList.add("chessboard");
  container.dataset.flip = flip ? "true" : "false";
  container.dataset.fen = parsed ? String(fen) : "";
  container.dataset.turn = parsed ? parsed.turn : "";
  container.dataset.diff = String(mat.diff);
  if (captured) {
    // the side at the top of the board has its row above it
    const top = flip ? "white" : "black";
    const bottom = flip ? "black" : "white";
    container.replaceChildren(capturedRow(top, mat), board, capturedRow(bottom, mat));
  } else {
    container.replaceChildren(board);
  }
  fit(container);
  if (!observed.has(container)) {
    observed.add(container);
    new ResizeObserver(() => fit(container)).observe(container);
  }
}

/**
 * The square of the king in check after the last move (its SAN ends in "+" or "#"),
 * from the position: the king of the side to move. Null when not in check.
 */
export function checkSquare(fen, san) {
  if (!san || !/[+#]$/.test(san)) return null;
  const parsed = parseFen(fen);
  if (!parsed) return null;
  const king = parsed.turn === "white" ? "K" : "k";
  for (const [sq, letter] of parsed.pieces) if (letter === king) return sq;
  return null;
}
