// The standalone widgets, each alone on its page for an OBS scene: the board
// (widget-board.html), the evaluation graph (widget-evalgraph.html) and the eval
// bar (widget-evalbar.html). See docs/obs.md for their URL parameters.
import { boardFlipped, checkSquare, renderBoard } from "./chessboard.js";
import { renderEvalBar } from "./evalbar.js";
import { drawEvalGraph } from "./evalgraph.js";
import { BoardFollower } from "./follow.js";
import { applyPageParams, applyWidgetParams, byTestId, param } from "./lib.js";

const kind = document.body.dataset.widgetPage;
// widgets go over a scene: transparent unless bg=solid
applyPageParams({ bg: "transparent" });
applyWidgetParams();

const root = document.querySelector("main");
const flip = boardFlipped();
document.body.dataset.flip = flip ? "true" : "false";
const off = (name) => ["0", "false", "no"].includes(String(param(name, "1")).toLowerCase());

function drawBoard(state) {
  const last = state.moves.length ? state.moves[state.moves.length - 1] : null;
  renderBoard(byTestId(root, "chessboard"), {
    fen: state.fen,
    lastMove: last ? last.uci : null,
    flip,
    coords: !off("coords"),
    captured: !off("captured"),
    check: last ? checkSquare(state.fen, last.san) : null,
  });
}

const RENDER = {
  board: drawBoard,
  evalgraph: (state) => drawEvalGraph(byTestId(root, "evalgraph-plot"), state),
  evalbar: (state) => renderEvalBar(root, state),
};

if (kind === "evalbar") {
  const bar = byTestId(root, "eval-bar");
  const vertical = String(param("orient", "horizontal")).toLowerCase() === "vertical";
  bar.classList.toggle("vertical", vertical);
  bar.classList.toggle("flipped", vertical && flip);
  document.body.dataset.orient = vertical ? "vertical" : "horizontal";
}

let current = null;
const follower = new BoardFollower({
  root,
  boardId: param("board"),
  render(state) {
    current = state;
    RENDER[kind](state);
  },
  freshness(_conn, _fresh, state) {
    current = state;
  },
  waiting(text) {
    const w = byTestId(root, "waiting");
    w.hidden = !text;
    w.textContent = text || "";
  },
});

if (kind === "evalgraph") {
  new ResizeObserver(() => {
    if (current) RENDER.evalgraph(current);
  }).observe(byTestId(root, "evalgraph-plot"));
}

follower.start();
