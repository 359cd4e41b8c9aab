"""Does the opening a player chose add to today's perceived rating? A measurement.

For each rated player-game of the development files (lichess rapid with
lichess's ``[%eval]`` comments; FIDE over the board with the file's depth-10
annotations), split as the project splits them
(:func:`livegain.batch.validity.split_part`: *calibration* to fit, *held-out*
to measure):

* today's perceived rating at the end of the game, as ``livegain validate``
  computes it: the file read by :func:`~livegain.batch.pgn_stream.read_pgn_evals`,
  the evaluation source of its first game's tags
  (:func:`~livegain.batch.eval_source.eval_source`), the shipped model of that
  source on the rating scale of its tags
  (:func:`~livegain.core.perceived.scale_of_tags`: lichess for a URL Site, else
  FIDE), Algorithm 4's r_e (:func:`~livegain.batch.eval_source.default_engine_rating`),
  :func:`~livegain.batch.validity.validity_rows`;
* an *opening prior*, read from the moves alone: the plies of the game up to
  and including the player's last move within the first K plies (the position
  the player chose to walk into) is the key; its estimate is the mean rating
  of the calibration player-games of the same side through that prefix,
  shrunk toward the estimate of the prefix one ply shorter, and so on down to
  the side's mean rating (``n / (n + m)`` on each prefix's own mean). White's
  and Black's tables are apart. ``m`` is chosen per file and K by a 5-fold
  cross-validation on the calibration part (folds by split group: a lichess
  game, a FIDE event), the MAE of the out-of-fold priors over a grid;
* on the held-out part: (a) perceived alone; (a2) ``rating ~ 1 + perceived``
  refitted on the calibration part (the control: what a refit of the line
  alone gains); (b) the prior alone; (c) ``rating ~ 1 + perceived + prior`` by
  least squares on the calibration part, with each calibration player-game's
  prior cross-fitted (tables of the other four folds), so it never holds its
  own rating. Caveat: the perceived ratings of calibration games are
  in-sample for the shipped models (fitted on the same calibration parts), so
  the fitted weight of perceived may be a little high. The split is by game
  (lichess) or event (FIDE), not by player: the same figures are also given
  for the held-out player-games of players in no calibration game, whose
  openings the tables cannot have learnt from their other games.

Figures: MAE over the MAE of the constant guess (the calibration part's
median rating), Spearman and mean offset (estimate minus rating), overall and
by 200-point band of the player's rating. Prints figures; asserts nothing.
Skips (exit 0, a message) when the shared data are absent. About 4 minutes
on 2 cores for both whole files::

    nice -n 10 .venv/bin/python bench/opening_prior.py --data both

``--games N`` keeps the first N games of each file in ``livegain validate
--games``'s fixed pseudo-random order (whole events over the board);
``--plies 4 8`` the prefix lengths to try (default 4 6 8 10 12);
``--write-priors FILE`` (one dataset) writes the held-out player-games'
priors of the longest prefix, keyed by
:func:`~livegain.batch.validity.player_game_key`, for
``bench/move_features.py --priors`` to read beside other evaluations.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy.stats import spearmanr

from livegain.batch.opening_fit import M_GRID, OpeningGame, counts, cross_fitted, estimate
from livegain.batch.validity import (
    BIN_WIDTH,
    cross_fold,
    player_game_key,
    sampled,
    split_group,
    split_part,
)
from livegain.core.opening import opening_keys

SHARED = Path(__file__).resolve().parents[1].parent / "shared/data"
DATA = {
    "lichess": SHARED / "lichess-rapid/lichess-rapid-dev.pgn.gz",
    "fide": SHARED / "fide-otb/fide-otb-dev-d10.pgn.gz",
}
PLIES = (4, 6, 8, 10, 12)
#: Resamples of the held-out groups for the intervals of (c) against (a).
BOOTSTRAP = 200

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PlayerGame:
    """One rated player-game with a calibrated estimate at its end."""

    rating: float
    perceived: float
    white: bool
    calibration: bool
    #: the split group's hash (a lichess game, a FIDE event)
    group: int
    #: the game's first plies (UCI), as many as the longest prefix needs
    plies: tuple[str, ...]
    #: whether White made the first ply (False after a FEN with Black to move)
    white_first: bool
    start: str
    #: the player's name as the file writes it
    player: str = ""
    #: :func:`~livegain.batch.validity.player_game_key`
    key: str = ""


# ---------------------------------------------------------------------------
# reading: today's perceived rating, as `livegain validate` computes it


def load(path: Path, cap: int | None, max_plies: int) -> tuple[list[PlayerGame], str]:
    """Every rated player-game with counted moves, and a line naming the
    model, scale and r_e used."""
    from livegain.batch.eval_source import default_engine_rating, eval_source, perceived_model
    from livegain.batch.pgn_stream import read_pgn_evals
    from livegain.batch.validity import validity_rows
    from livegain.core.perceived import scale_of_tags

    t0 = time.perf_counter()
    read = read_pgn_evals(path)
    games = sampled(read.games, cap, lambda g: g.headers)
    print(
        f"{path.name}: {len(read.games)} games read ({len(read.skipped)} skipped) in "
        f"{time.perf_counter() - t0:.0f} s; {len(games)} kept",
        file=sys.stderr,
        flush=True,
    )
    headers = games[0].headers
    source = eval_source("pgn", headers)
    scale = scale_of_tags(headers)
    model, why = perceived_model(source, scale=scale)
    if model is None:
        raise SystemExit(f"{path.name}: {why}")
    # today's perceived from the moves alone: the opening is what is measured here
    model = replace(model, opening=None)
    r_e, _r_e_why = default_engine_rating(source)
    out: list[PlayerGame] = []
    t0 = time.perf_counter()
    for k, g in enumerate(games):
        rows = validity_rows([g], model, r_e)
        calibration = split_part(g.headers) == "calibration"
        group = split_group(g.headers)
        plies = tuple(g.ucis[:max_plies])
        # rows come White first, then Black; a lone row is told by name and rating
        sides: list[bool]
        if len(rows) == 2:
            sides = [True, False]
        else:
            sides = [r.player == g.white and r.rating == float(g.white_elo or -1) for r in rows]
        for row, white in zip(rows, sides, strict=True):
            out.append(
                PlayerGame(
                    rating=row.rating,
                    perceived=row.perceived.rating,
                    white=white,
                    calibration=calibration,
                    group=group,
                    plies=plies,
                    white_first=g.first_mover_is_white,
                    start=g.start_fen or "",
                    player=row.player,
                    key=player_game_key(g.headers, white),
                )
            )
        if (k + 1) % 2000 == 0:
            print(
                f"  {k + 1}/{len(games)} games, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    line = f"model {model.name} (scale {model.scale}, prior {model.prior:.0f}), r_e {r_e:.0f}"
    return out, line


# ---------------------------------------------------------------------------
# the opening prior (livegain.batch.opening_fit, as `livegain fit-opening` fits it)


def opening_rows(rows: list[PlayerGame], k: int) -> list[OpeningGame]:
    """The player-games' openings: key chains of their first ``k`` plies
    (a game from another start is read at its side's root only)."""
    return [
        OpeningGame(
            r.rating,
            tuple(opening_keys(r.white, r.white_first, () if r.start else r.plies, k)),
            cross_fold(r.group),
        )
        for r in rows
    ]


# ---------------------------------------------------------------------------
# figures


def figures(est: FloatArray, truth: FloatArray, guess: float) -> tuple[float, float, float]:
    """(MAE / MAE of the constant guess, Spearman, mean offset)."""
    ratio = float(np.abs(est - truth).mean() / np.abs(guess - truth).mean())
    rho = float(spearmanr(est, truth).statistic) if np.ptp(est) > 0 else float("nan")
    return ratio, rho, float((est - truth).mean())


def least_squares(x: FloatArray, y: FloatArray) -> FloatArray:
    """Coefficients of ``y ~ 1 + x``."""
    a = np.column_stack([np.ones(len(y)), x])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return np.asarray(coef, dtype=float)


def resamples(groups: npt.NDArray[np.int64], draws: int = BOOTSTRAP) -> list[npt.NDArray[np.intp]]:
    """Indices of ``draws`` resamples of the held-out split groups (games on
    lichess, events over the board) with replacement."""
    rng = np.random.default_rng(0)
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    members = np.split(np.argsort(inverse, kind="stable"), np.cumsum(counts)[:-1])
    out = []
    for _ in range(draws):
        pick = rng.integers(0, len(members), len(members))
        out.append(np.concatenate([members[g] for g in pick]))
    return out


def bootstrap(
    draws: list[npt.NDArray[np.intp]],
    truth: FloatArray,
    guess: float,
    new: FloatArray,
    old: FloatArray,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """95 % intervals of the change in MAE ratio and in Spearman (``new``
    minus ``old``) over the resamples."""
    d_ratio: list[float] = []
    d_rho: list[float] = []
    for idx in draws:
        t = truth[idx]
        base = np.abs(guess - t).mean()
        d_ratio.append(float((np.abs(new[idx] - t).mean() - np.abs(old[idx] - t).mean()) / base))
        d_rho.append(
            float(spearmanr(new[idx], t).statistic) - float(spearmanr(old[idx], t).statistic)
        )
    lo, hi = np.quantile(d_ratio, [0.025, 0.975])
    rlo, rhi = np.quantile(d_rho, [0.025, 0.975])
    return (float(lo), float(hi)), (float(rlo), float(rhi))


def run_dataset(
    name: str, path: Path, cap: int | None, plies: list[int], write: Path | None = None
) -> None:
    t0 = time.perf_counter()
    rows, model_line = load(path, cap, max(plies))
    cal = [r for r in rows if r.calibration]
    test = [r for r in rows if not r.calibration]
    y_cal = np.array([r.rating for r in cal])
    y_test = np.array([r.rating for r in test])
    p_cal = np.array([r.perceived for r in cal])
    p_test = np.array([r.perceived for r in test])
    guess = float(np.median(y_cal))
    print(f"\n== {name}: {path.name}{'' if cap is None else f' (first {cap} games)'} ==")
    print(model_line)
    print(
        f"player-games: {len(cal)} calibration, {len(test)} held-out "
        f"(White {sum(r.white for r in test)}, Black {sum(not r.white for r in test)}); "
        f"constant guess {guess:.0f} (calibration median)"
    )

    estimates: dict[str, FloatArray] = {}
    estimates["(a) perceived"] = p_test
    a2 = least_squares(p_cal[:, None], y_cal)
    estimates["(a2) 1+perceived"] = a2[0] + a2[1] * p_test
    print(f"(a2) refit: rating = {a2[0]:.0f} + {a2[1]:.3f} perceived")
    print(
        "\nK: m chosen (5-fold CV MAE of the prior on calibration, by m); held-out player-games "
        "whose full prefix was seen in calibration; (c)'s fit"
    )
    for k in plies:
        cal_rows = opening_rows(cal, k)
        test_rows = opening_rows(test, k)
        cv: list[float] = []
        oof_by_m: list[FloatArray] = []
        for m in M_GRID:
            oof = cross_fitted(cal_rows, m, guess)
            oof_by_m.append(oof)
            cv.append(float(np.abs(oof - y_cal).mean()))
        best = int(np.argmin(cv))
        m = M_GRID[best]
        oof = oof_by_m[best]
        full = counts(cal_rows)
        prior_test = np.array([estimate(r.keys, full, m, guess) for r in test_rows])
        seen = float(np.mean([r.keys[-1] in full for r in test_rows]))
        coef, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(cal)), p_cal, oof]), y_cal)
        estimates[f"(b) prior K={k}"] = prior_test
        if write is not None and k == max(plies):
            write_priors(write, test, prior_test, k, m)
        estimates[f"(c) 1+perc+prior K={k}"] = coef[0] + coef[1] * p_test + coef[2] * prior_test
        curve = " ".join(f"{mm:g}:{c:.0f}" for mm, c in zip(M_GRID, cv, strict=True))
        print(
            f"  K={k:2d}: m={m:g} [{curve}]; seen {seen:.1%}; "
            f"rating = {coef[0]:.0f} + {coef[1]:.3f} perceived + {coef[2]:.3f} prior"
        )

    print(f"\nheld-out, {len(test)} player-games")
    print(f"{'estimator':<24} {'MAE':>6} {'ratio':>6} {'Spearman':>8} {'offset':>7}")
    const = np.full(len(test), guess)
    print(
        f"{'constant guess':<24} {np.abs(const - y_test).mean():6.1f} {1.0:6.3f} {'':>8} "
        f"{(const - y_test).mean():+7.1f}"
    )
    for label, est in estimates.items():
        ratio, rho, off = figures(est, y_test, guess)
        print(f"{label:<24} {np.abs(est - y_test).mean():6.1f} {ratio:6.3f} {rho:8.3f} {off:+7.1f}")

    draws = resamples(np.array([r.group for r in test], dtype=np.int64))
    print(
        f"\n(c) against (a) and (a2), held-out: change in MAE ratio and in Spearman, "
        f"95 % interval over {BOOTSTRAP} resamples of the held-out groups"
    )
    for k in plies:
        c = estimates[f"(c) 1+perc+prior K={k}"]
        for label, old in (("a", p_test), ("a2", estimates["(a2) 1+perceived"])):
            (lo, hi), (rlo, rhi) = bootstrap(draws, y_test, guess, c, old)
            d_ratio = figures(c, y_test, guess)[0] - figures(old, y_test, guess)[0]
            d_rho = figures(c, y_test, guess)[1] - figures(old, y_test, guess)[1]
            print(
                f"  K={k:2d} (c)-({label}): ratio {d_ratio:+.3f} [{lo:+.3f}, {hi:+.3f}], "
                f"Spearman {d_rho:+.3f} [{rlo:+.3f}, {rhi:+.3f}]"
            )

    # Players seen in no calibration game: the split is by game (lichess) or
    # event (FIDE), so a held-out player may have calibration games through
    # the same openings; these are the figures for the others.
    known = {r.player for r in cal}
    new = np.array([r.player not in known for r in test])
    print(
        f"\nheld-out player-games of players in no calibration game: {int(new.sum())} "
        f"of {len(test)} (constant guess as above)"
    )
    print(f"{'estimator':<24} {'MAE':>6} {'ratio':>6} {'Spearman':>8} {'offset':>7}")
    for label, est in estimates.items():
        ratio, rho, off = figures(est[new], y_test[new], guess)
        print(
            f"{label:<24} {np.abs(est[new] - y_test[new]).mean():6.1f} {ratio:6.3f} "
            f"{rho:8.3f} {off:+7.1f}"
        )

    bands = sorted({int(r // BIN_WIDTH) * BIN_WIDTH for r in y_test})
    short = {
        "(a) perceived": "a",
        "(a2) 1+perceived": "a2",
        **{f"(b) prior K={k}": f"b{k}" for k in plies},
        **{f"(c) 1+perc+prior K={k}": f"c{k}" for k in plies},
    }
    head = f"{'band':>5} {'n':>5} {'const':>6} " + " ".join(f"{s:>6}" for s in short.values())
    for title, what in (
        ("mean offset (estimate - rating)", "offset"),
        ("MAE / MAE of the constant guess", "ratio"),
    ):
        print(f"\nby rating band, held-out: {title}")
        print(head)
        for lo in bands:
            sel = (y_test >= lo) & (y_test < lo + BIN_WIDTH)
            t = y_test[sel]
            base = np.abs(guess - t).mean()
            cells = [f"{lo:5d}", f"{int(sel.sum()):5d}"]
            cells.append(f"{(guess - t).mean():+6.0f}" if what == "offset" else f"{1.0:6.2f}")
            for label in short:
                e = estimates[label][sel]
                if what == "offset":
                    cells.append(f"{(e - t).mean():+6.0f}")
                else:
                    cells.append(f"{np.abs(e - t).mean() / base:6.2f}")
            print(" ".join(cells))
    print(f"\n({name}: {time.perf_counter() - t0:.0f} s)", flush=True)


def write_priors(path: Path, test: list[PlayerGame], priors: FloatArray, k: int, m: float) -> None:
    """The held-out player-games' priors (fitted on the calibration part),
    keyed by :func:`~livegain.batch.validity.player_game_key`, as JSON: what
    ``bench/move_features.py --priors`` reads beside other evaluations."""
    data = {
        "plies": k,
        "m": m,
        "priors": {r.key: round(float(p), 1) for r, p in zip(test, priors, strict=True)},
    }
    path.write_text(json.dumps(data))
    print(f"  K={k}: {len(test)} held-out priors written to {path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", choices=("lichess", "fide", "both"), default="both")
    ap.add_argument("--games", type=int, default=None, help="first N games per file (sample order)")
    ap.add_argument("--plies", type=int, nargs="+", default=list(PLIES))
    ap.add_argument(
        "--write-priors",
        type=Path,
        default=None,
        help="write the held-out priors of the longest prefix (one dataset) to this JSON file",
    )
    args = ap.parse_args()
    names = ["lichess", "fide"] if args.data == "both" else [args.data]
    if args.write_priors is not None and len(names) > 1:
        ap.error("--write-priors needs one --data (lichess or fide)")
    absent = [str(DATA[n]) for n in names if not DATA[n].exists()]
    if absent:
        print(f"skipped: {', '.join(absent)} absent")
        return 0
    for name in names:
        run_dataset(name, DATA[name], args.games, sorted(set(args.plies)), args.write_priors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
