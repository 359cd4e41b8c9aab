"""The shipped human win/draw/loss models: ``config/wdl.toml``.

As for the perceived-rating models (:mod:`livegain.models.perceived`), one file in the
source tree is the source of truth; the package reaches it as
``livegain/data/wdl.toml``, a symbolic link that the wheel build turns into a
copy. ``livegain fit --wdl ... --write-config`` rewrites it.

The file holds one ``[[prior]]`` per kind of game (the ratings-only model)
and one ``[[model]]`` per evaluation source and kind (the live knots), each
with its provenance (command, data, part, date, evaluation source).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from livegain.core.human_wdl import CLASSICAL_OTB, KINDS, HumanWdlModel, Knot, RatingsPrior
from livegain.models.files import (
    PROVENANCE_KEYS,
    CalibrationError,
    LimitLike,
    choose_for_source,
    found_or_none,
    model_file,
    numbers_from_table,
    numbers_to_table,
    read_toml,
    reading_table,
)

#: Environment variable naming another W/D/L model file.
ENV_PATH = "LIVEGAIN_WDL_MODELS"

_HEADER = """\
# Human win/draw/loss models (docs/maths.md "Human win/draw/loss", docs/validity.md).
# One [[prior]] (ratings only) per kind of game, one [[model]] per evaluation
# source and kind. Written by
#   livegain fit FILE.pgn --wdl --kind KIND [--evals pgn|engine] --write-config
# Each entry's provenance (command, data, part, date, evaluations) is kept beside it.
"""

_PRIOR_KEYS = ("source", "part", "games", "date", "command")
_KNOT_FIELDS = ("a", "b", "c", "e", "f", "g", "h", "m")


def wdl_path() -> Path:
    """The model file in use: ``$LIVEGAIN_WDL_MODELS`` or the packaged one."""
    return model_file(ENV_PATH, "wdl.toml")


def _prior(path: Path, number: int, raw: Any) -> RatingsPrior:
    with reading_table(f"{path}: [[prior]] #{number}", raw):
        kind = str(raw["kind"])
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
        return numbers_from_table(
            RatingsPrior,
            raw,
            kind=kind,
            provenance={k: str(raw[k]) for k in _PRIOR_KEYS if k in raw},
        )


def _knots(raw: Any) -> tuple[Knot, ...]:
    plies = [int(x) for x in raw["plies"]]
    columns = [[float(x) for x in raw[k]] for k in _KNOT_FIELDS]
    if any(len(c) != len(plies) for c in columns):
        raise ValueError("every knot column needs one value per ply")
    return tuple(Knot(p, *(c[i] for c in columns)) for i, p in enumerate(plies))


def _model(path: Path, number: int, raw: Any, priors: dict[str, RatingsPrior]) -> HumanWdlModel:
    with reading_table(f"{path}: [[model]] #{number}", raw):
        kind = str(raw["kind"])
        if kind not in priors:
            raise ValueError(f"no [[prior]] for kind {kind!r}")
        return HumanWdlModel(
            name=str(raw["name"]),
            evals=str(raw["evals"]),
            prior=priors[kind],
            knots=_knots(raw["knots"]),
            unrated_knots=_knots(raw["unrated_knots"]),
            provenance={k: str(raw[k]) for k in PROVENANCE_KEYS if k in raw},
            curve_draw_share=(
                None if raw.get("curve_draw_share") is None else float(raw["curve_draw_share"])
            ),
        )


def load_wdl_file(path: str | Path | None = None) -> tuple[list[RatingsPrior], list[HumanWdlModel]]:
    """Every prior and model of the file (empty lists when there is none)."""
    p = Path(path) if path is not None else wdl_path()
    data = read_toml(p)
    raw_priors = data.get("prior", [])
    raw_models = data.get("model", [])
    if not isinstance(raw_priors, list) or not isinstance(raw_models, list):
        raise CalibrationError(f"{p}: 'prior' and 'model' must be arrays of tables")
    priors = [_prior(p, i, e) for i, e in enumerate(raw_priors, start=1)]
    by_kind = {pr.kind: pr for pr in priors}
    models = [_model(p, i, e, by_kind) for i, e in enumerate(raw_models, start=1)]
    return priors, models


def find_wdl_model(
    evals: str,
    kind: str | None,
    engine_name: str | None = None,
    limit: LimitLike = None,
    path: str | Path | None = None,
) -> tuple[HumanWdlModel | None, str]:
    """The model for this evaluation source and kind of game, and a line
    saying why. Models of the kind are preferred (``kind`` None: classical over
    the board); with none for the source in that kind, another kind's model
    of the source is taken on the wanted kind's prior, labelled so."""
    _priors, models = load_wdl_file(path)
    wanted = kind or CLASSICAL_OTB
    same = [m for m in models if m.kind == wanted]
    found = choose_for_source(same, evals, engine_name, limit)
    if found[0] is not None and "not validated" not in found[1] and "no model" not in found[1]:
        return found
    other_found = choose_for_source(models, evals, engine_name, limit)
    other, why_other = other_found
    if other is None:
        return found
    if other.kind == wanted:
        return other_found
    prior = next((p for p in _priors if p.kind == wanted), None)
    if prior is None:
        return other, f"{why_other}; fitted on {other.kind} games, no {wanted} model"
    adapted = HumanWdlModel(
        name=f"{other.name} on the {wanted} prior",
        evals=other.evals,
        prior=prior,
        knots=other.knots,
        unrated_knots=other.unrated_knots,
        provenance=dict(other.provenance),
        curve_draw_share=other.curve_draw_share,
    )
    return (
        adapted,
        f"{why_other}; its knots fitted on {other.kind} games, not validated on {wanted}",
    )


def pick_wdl_model(
    evals: str,
    kind: str | None,
    engine_name: str | None = None,
    limit: LimitLike = None,
    path: str | Path | None = None,
) -> tuple[HumanWdlModel | None, str]:
    """:func:`find_wdl_model` for those that must go on without a model: a
    missing or unreadable file gives no model (the engine's W/D/L is shown) and
    says why."""
    return found_or_none(
        "human W/D/L model", path, lambda: find_wdl_model(evals, kind, engine_name, limit, path)
    )


def _knots_toml(knots: tuple[Knot, ...]) -> dict[str, Any]:
    return {
        "plies": [k.ply for k in knots],
        **{f: [getattr(k, f) for k in knots] for f in _KNOT_FIELDS},
    }


def store_wdl(
    prior: RatingsPrior, model: HumanWdlModel | None, path: str | Path | None = None
) -> Path:
    """Write ``prior`` (replacing the kind's) and ``model`` (replacing one of
    the same name) into the model file."""
    import tomli_w

    p = Path(path) if path is not None else wdl_path().resolve()
    priors, models = load_wdl_file(p) if p.exists() else ([], [])
    priors = [x for x in priors if x.kind != prior.kind] + [prior]
    if model is not None:
        models = [m for m in models if m.name != model.name] + [model]
    body = tomli_w.dumps(
        {
            "prior": [
                {
                    "kind": x.kind,
                    **{k: x.provenance[k] for k in _PRIOR_KEYS if k in x.provenance},
                    **numbers_to_table(x),
                }
                for x in priors
            ],
            "model": [
                {
                    "name": m.name,
                    "kind": m.kind,
                    "evals": m.evals,
                    **{k: m.provenance[k] for k in PROVENANCE_KEYS if k in m.provenance},
                    **(
                        {"curve_draw_share": m.curve_draw_share}
                        if m.curve_draw_share is not None
                        else {}
                    ),
                    "knots": _knots_toml(m.knots),
                    "unrated_knots": _knots_toml(m.unrated_knots),
                }
                for m in models
            ],
        }
    )
    p.write_text(_HEADER + "\n" + body, encoding="utf-8")
    return p
