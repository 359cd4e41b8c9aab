"""The calibrated perceived-rating models (docs/maths.md, docs/validity.md):
one ``[[model]]`` per evaluation source in ``config/perceived.toml``
(packaged as ``livegain/data/perceived.toml``), read, chosen and written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from livegain.core.opening import OpeningTable
from livegain.core.perceived import (
    EXTRAPOLATED,
    FORM_TAU,
    ForwardBin,
    MoveBin,
    MoveClasses,
    PerceivedModel,
)
from livegain.models.engine import shipped_path
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
from livegain.models.opening import load_opening_table, opening_file

#: Environment variable naming another perceived-rating model file.
PERCEIVED_ENV_PATH = "LIVEGAIN_PERCEIVED_MODELS"

_PERCEIVED_HEADER = """\
# Calibrated perceived-rating models (docs/maths.md, docs/validity.md), one
# [[model]] per evaluation source. Written by
#   livegain fit FILE.pgn [--evals pgn|engine] --write-config
# Each entry's provenance (command, data, date, evaluations) is kept beside it.
"""


def perceived_path() -> Path:
    """The model file in use: ``$LIVEGAIN_PERCEIVED_MODELS`` or the packaged one."""
    return model_file(PERCEIVED_ENV_PATH, "perceived.toml")


def load_perceived_models(path: str | Path | None = None) -> list[PerceivedModel]:
    """Every model of the file (an empty list when there is none)."""
    p = Path(path) if path is not None else perceived_path()
    data = read_toml(p)
    entries = data.get("model", [])
    if not isinstance(entries, list):
        raise CalibrationError(f"{p}: 'model' must be an array of tables ([[model]])")
    return [_model(p, i, e) for i, e in enumerate(entries, start=1)]


def _model(path: Path, number: int, raw: Any) -> PerceivedModel:
    with reading_table(f"{path}: [[model]] #{number}", raw):
        classes = MoveClasses(
            phase_edges=tuple(int(x) for x in raw["phase_edges"]),
            eval_edges=tuple(int(x) for x in raw["eval_edges"]),
            loss_edges=tuple(int(x) for x in raw["loss_edges"]),
            clip_cp=int(raw["clip_cp"]),
        )
        bins = tuple(numbers_from_table(MoveBin, b) for b in raw["bins"])
        provenance = {k: str(raw[k]) for k in PROVENANCE_KEYS if k in raw}
        forward = tuple(numbers_from_table(ForwardBin, b) for b in raw.get("forward", []))
        return PerceivedModel(
            name=str(raw["name"]),
            classes=classes,
            move_scores=tuple(float(x) for x in raw["move_scores"]),
            bins=bins,
            prior=float(raw["prior"]),
            prior_low=float(raw["prior_low"]),
            prior_high=float(raw["prior_high"]),
            min_moves=int(raw.get("min_moves", 5)),
            rating_low=None if raw.get("rating_low") is None else float(raw["rating_low"]),
            rating_high=None if raw.get("rating_high") is None else float(raw["rating_high"]),
            provenance=provenance,
            forward=forward,
            scale=str(raw.get("scale", "lichess")),
            pop_mean=None if raw.get("pop_mean") is None else float(raw["pop_mean"]),
            pop_sd=None if raw.get("pop_sd") is None else float(raw["pop_sd"]),
            below_label=str(raw.get("below_label", EXTRAPOLATED)),
            tau=float(raw.get("tau", FORM_TAU)),
            opening=_opening(path, raw.get("opening")),
        )


def _opening(path: Path, name: Any) -> OpeningTable | None:
    """The opening table a ``[[model]]`` names (None: it names none)."""
    if name is None:
        return None
    return load_opening_table(opening_file(str(name), path))


def find_perceived_model(
    evals: str,
    engine_name: str | None = None,
    limit: LimitLike = None,
    path: str | Path | None = None,
    scale: str | None = None,
) -> tuple[PerceivedModel | None, str]:
    """The perceived-rating model for this evaluation source, and why
    (:func:`choose_for_source`). With a ``scale`` ("fide" or "lichess"), the
    models of that rating scale are preferred (one at another limit of the
    same engine too, labelled so); with none for the source on that scale,
    the other scale's model is taken and the line says so."""
    models = load_perceived_models(path)
    if scale is not None:
        same = [m for m in models if m.scale == scale]
        found = choose_for_source(same, evals, engine_name, limit)
        if found[0] is not None and "no model for" not in found[1]:
            return found
        anywhere = choose_for_source(models, evals, engine_name, limit)
        other, why = anywhere
        if other is not None and other.scale != scale:
            return other, f"{why}; on the {other.scale} scale, no {scale}-scale model for it"
        if other is not None:
            return other, why
        return found
    return choose_for_source(models, evals, engine_name, limit)


def pick_perceived_model(
    evals: str,
    engine_name: str | None = None,
    limit: LimitLike = None,
    path: str | Path | None = None,
    scale: str | None = None,
) -> tuple[PerceivedModel | None, str]:
    """:func:`find_perceived_model` for those that must go on without a model
    (the service, ``analyze``, the demo): a named file that is missing or a
    model file that cannot be read gives no model and says why, not an error."""
    return found_or_none(
        "calibrated model",
        path,
        lambda: find_perceived_model(evals, engine_name, limit, path, scale),
    )


def perceived_model_toml(model: PerceivedModel) -> dict[str, Any]:
    """One ``[[model]]`` table."""
    out: dict[str, Any] = {"name": model.name}
    for key in PROVENANCE_KEYS:
        if key in model.provenance:
            out[key] = model.provenance[key]
    c = model.classes
    out.update(
        {
            "prior": model.prior,
            "prior_low": model.prior_low,
            "prior_high": model.prior_high,
            "min_moves": model.min_moves,
            **(
                {"rating_low": model.rating_low, "rating_high": model.rating_high}
                if model.rating_low is not None and model.rating_high is not None
                else {}
            ),
            "scale": model.scale,
            "below_label": model.below_label,
            "tau": model.tau,
            **(
                {"pop_mean": model.pop_mean, "pop_sd": model.pop_sd}
                if model.pop_mean is not None and model.pop_sd is not None
                else {}
            ),
            "clip_cp": c.clip_cp,
            "phase_edges": list(c.phase_edges),
            "eval_edges": list(c.eval_edges),
            "loss_edges": list(c.loss_edges),
            **({"opening": model.opening.file} if model.opening is not None else {}),
            "move_scores": [round(m, 2) for m in model.move_scores],
            "bins": [numbers_to_table(b) for b in model.bins],
            "forward": [numbers_to_table(f) for f in model.forward],
        }
    )
    return out


def store_perceived_model(model: PerceivedModel, path: str | Path | None = None) -> Path:
    """Add ``model`` to the model file, replacing one of the same name."""
    import tomli_w

    p = Path(path) if path is not None else perceived_path().resolve()
    kept = [m for m in load_perceived_models(p) if m.name != model.name]
    kept.append(model)
    body = tomli_w.dumps({"model": [perceived_model_toml(m) for m in kept]})
    p.write_text(_PERCEIVED_HEADER + "\n" + body, encoding="utf-8")
    return p


def read_shipped_files() -> None:
    """Read the calibration and model files in use now, so that the next
    lookups (:func:`find_calibration`, :func:`pick_perceived_model`) parse
    nothing. Raises :class:`CalibrationError` as they would."""
    read_toml(shipped_path())
    read_toml(perceived_path())
