// The evaluation bar and its win/draw/loss line (board overlay and eval bar widget).
import { DASH, byTestId, displayEval, evalText, perMille, whiteShare } from "./lib.js";

/**
 * Fills the eval bar inside `root` ([data-testid=eval-bar], eval-bar-white,
 * eval-cp, wdl-win/draw/loss: the chances shown, `eval.wdl`, the human model's;
 * engine-wdl-win/draw/loss when the page has them: the engine's own,
 * `eval.engine_wdl`, shown only beside a human model's) from `state` (a BoardState). The white part's share
 * is its width (and --share, which a vertical bar uses as its height).
 */
export function renderEvalBar(root, state) {
  const { ev, pending } = displayEval(state);
  const share = whiteShare(ev);
  const pct = `${(share * 100).toFixed(2)}%`;
  byTestId(root, "eval-bar").dataset.pending = pending ? "true" : "false";
  const white = byTestId(root, "eval-bar-white");
  white.style.width = pct;
  white.style.setProperty("--share", pct);
  const cp = byTestId(root, "eval-cp");
  cp.textContent = evalText(ev);
  cp.dataset.cp = ev ? String(ev.cp) : "";
  cp.dataset.mate = ev && ev.mate !== null && ev.mate !== undefined ? String(ev.mate) : "";
  cp.dataset.side = share >= 0.5 ? "white" : "black";
  const wdl = ev && ev.wdl;
  for (const k of ["win", "draw", "loss"]) {
    const node = byTestId(root, `wdl-${k}`);
    if (!node) continue;
    node.textContent = wdl ? perMille(wdl[k]) : DASH;
    node.dataset.permille = wdl ? String(wdl[k]) : "";
  }
  // the engine's own W/D/L, where the page has room for it: labelled as the engine's
  const line = byTestId(root, "engine-wdl");
  if (!line) return;
  const engine = ev && ev.wdl_model && ev.engine_wdl;
  line.hidden = !engine;
  for (const k of ["win", "draw", "loss"]) {
    const node = byTestId(root, `engine-wdl-${k}`);
    node.textContent = engine ? perMille(engine[k]) : DASH;
    node.dataset.permille = engine ? String(engine[k]) : "";
  }
}
