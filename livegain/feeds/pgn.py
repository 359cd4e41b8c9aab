"""Live PGN text -> :class:`GameSnapshot` values, keeping the legal prefix of bad games.

Live PGN is messier than archive PGN: files are fetched while the operator's
software rewrites them, so a game may be cut mid-move or mid-comment; DGT
boards produce illegal trailing moves ("kings in the centre"); clocks come as
``{[%clk 1:30:00]}``, split over several comments ``{[%clk 0:15:27]} {[%emt
0:00:02]}``, unpadded (``1:31:3``) or not at all. This module is a small,
forgiving tokenizer of our own (python-chess's reader silently drops an
incomplete last move and hides where an illegal move was); python-chess does
the chess: SAN parsing and legality, FEN, Chess960 start positions.

Everything here is pure (no I/O). :func:`parse_pgn` never raises: each game
comes back with the snapshot of its legal prefix and a list of
:class:`PgnIssue` values naming the game (players, round) and the ply/SAN.
Up to :data:`MAX_TRAILING_ILLEGAL` illegal tokens at the very end of a game
are kept in the snapshot as they came, unreported: the game state reads DGT's
"kings in the centre" result signal from them (or reports them once, with the
board's identity). An illegal move followed by more moves is reported, the
legal prefix kept in ``moves``, and the rest passed on in the snapshot's
``after_illegal``: the game state goes on from there when it can tell the
position (an illegal move that stood over the board), else marks the board.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field, replace

import chess

from livegain.core.board.board import DEFAULT_MAX_PLIES
from livegain.core.board.identity import positive_number, split_round
from livegain.core.board.results import normalize_result
from livegain.core.snapshot import GameSnapshot, PlayerInfo, official_rating

#: Default plies per game (``limits.max_plies``); a longer game is refused.
MAX_PLIES = DEFAULT_MAX_PLIES


# A game starts at a tag line; games are split on a blank line followed by a tag.
_SPLIT_RE = re.compile(r"\n[ \t]*\n\s*(?=\[[A-Za-z0-9_]+[ \t]+\")")
_TAG_RE = re.compile(r'^\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
# Clock fields have at most 6 digits (a longer one is no clock: ignored, never an overflow).
_CLK_RE = re.compile(r"\[%clk\s+(\d{1,6}):(\d{1,6})(?::(\d{1,6}(?:\.\d{0,6})?))?\s*\]")
_EMT_RE = re.compile(r"\[%emt\s+(\d{1,6}):(\d{1,6})(?::(\d{1,6}(?:\.\d{0,6})?))?\s*\]")
_MOVE_NUMBER_RE = re.compile(r"^(\d+)(\.+|\s*\.\.\.)")
_ANNOTATION_RE = re.compile(r"[!?]+$")
_TERMINATORS = {"1-0", "0-1", "1/2-1/2", "*", "½-½"}
# At most this many illegal tokens at the end of a game are passed on as they are.
MAX_TRAILING_ILLEGAL = 2
_TIME_RE = re.compile(r"^\s*(\d{1,6}):(\d{1,6})(?::(\d{1,6}(?:\.\d{0,6})?))?\s*$")


@dataclass(frozen=True)
class PgnIssue:
    """One problem found in a game: ``where`` names the game and ply, ``message`` what."""

    where: str
    message: str
    truncated: bool = False  # the text ends mid-move / mid-comment (a partial fetch)


@dataclass(frozen=True)
class ParsedGame:
    """One game of a PGN text: the snapshot of its legal prefix, plus what was wrong.

    ``clock_seconds`` and ``emt_seconds`` keep the exact (fractional) clock and
    elapsed-move-time annotations per move, for the replay's timing.
    ``snapshot`` is None when nothing usable was found (garbage, an invalid FEN).
    """

    index: int
    snapshot: GameSnapshot | None
    issues: tuple[PgnIssue, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    clock_seconds: tuple[float | None, ...] = ()
    emt_seconds: tuple[float | None, ...] = ()
    text: str = field(default="", repr=False)
    trailing_illegal: int = 0  # raw (illegal) tokens at the end of ``snapshot.moves``
    text_key: str = field(default="", repr=False, compare=False)  # the text as it was split

    @property
    def truncated(self) -> bool:
        return any(i.truncated for i in self.issues)


def split_games(text: str) -> list[str]:
    """Split a (multi-game) PGN text into game texts; normalises ``\\r\\n`` first."""
    text = normalise_newlines(text).strip("\n\ufeff \t")
    if not text.strip():
        return []
    return [part.strip("\n") for part in _SPLIT_RE.split(text) if part.strip()]


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_time(value: str) -> float | None:
    """``1:30:00`` / ``0:15:27.5`` / ``1:31:3`` / ``90:00`` -> seconds; None if unreadable."""
    m = _TIME_RE.match(value)
    if not m:
        return None
    return _hms(m.group(1), m.group(2), m.group(3))


def _hms(a: str, b: str, c: str | None) -> float:
    if c is None:  # m:ss
        return int(a) * 60 + int(b)
    return int(a) * 3600 + int(b) * 60 + float(c)


def _id_or_none(value: str | None) -> str | None:
    return value.strip() if value is not None and positive_number(value) is not None else None


def _text_or_none(value: str | None) -> str | None:
    if value is None:
        return None
    v = value.strip()
    return v if v and v not in {"?", "-"} else None


def player_from_headers(headers: dict[str, str], color: str) -> PlayerInfo:
    """PlayerInfo from PGN tags (``White``, ``WhiteElo``, ``WhiteTitle``, ...)."""
    return PlayerInfo(
        name=(headers.get(color) or "?").strip() or "?",
        title=_text_or_none(headers.get(f"{color}Title")),
        federation=_text_or_none(headers.get(f"{color}Fed") or headers.get(f"{color}Federation")),
        rating=official_rating(headers.get(f"{color}Elo")),
        fide_id=_id_or_none(headers.get(f"{color}FideId")),
    )


def describe_game(headers: dict[str, str], index: int) -> str:
    """How errors name a game: ``game 3 (Carlsen - Giri, round 3.5)``."""
    white = (headers.get("White") or "?").strip() or "?"
    black = (headers.get("Black") or "?").strip() or "?"
    rnd = headers.get("Round")
    where = f"game {index + 1} ({white} - {black}"
    if rnd and rnd.strip() not in {"", "?", "-"}:
        where += f", round {rnd.strip()}"
    return where + ")"


def ply_label(ply: int, first_turn_white: bool = True, first_fullmove: int = 1) -> str:
    """Ply (1-based) -> ``12.`` / ``12...`` as a reader would look for it."""
    offset = 0 if first_turn_white else 1
    k = ply - 1 + offset
    number = first_fullmove + k // 2
    return f"{number}." if k % 2 == 0 else f"{number}..."


# --- tokenizer -------------------------------------------------------------------------------


@dataclass
class _Token:
    kind: str  # "san", "comment", "result", "truncated"
    text: str
    complete: bool = True  # a SAN token running to the very end of the text may be cut


def _tokens(movetext: str) -> Iterable[_Token]:
    i = 0
    n = len(movetext)
    while i < n:
        c = movetext[i]
        if c.isspace():
            i += 1
            continue
        if c == "{":
            j = movetext.find("}", i + 1)
            if j < 0:
                yield _Token("truncated", "comment not closed (text cut mid-comment?)")
                return
            yield _Token("comment", movetext[i + 1 : j])
            i = j + 1
            continue
        if c == ";":
            j = movetext.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "%" and (i == 0 or movetext[i - 1] == "\n"):
            j = movetext.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "(":
            depth = 0
            j = i
            while j < n:
                cj = movetext[j]
                if cj == "{":
                    k = movetext.find("}", j + 1)
                    if k < 0:
                        j = n
                        break
                    j = k
                elif cj == "(":
                    depth += 1
                elif cj == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                yield _Token("truncated", "variation not closed (text cut mid-variation?)")
                return
            i = j + 1
            continue
        if c in ")}":  # stray closers: skip
            i += 1
            continue
        j = i
        while j < n and not movetext[j].isspace() and movetext[j] not in "{}();":
            j += 1
        if j == i:  # cannot happen (every other character is handled above); never spin
            i += 1
            continue
        word = movetext[i:j]
        i = j
        yield from _word_tokens(word, complete=j < n)


def _word_tokens(word: str, complete: bool) -> Iterable[_Token]:
    if word.startswith("$"):
        return
    if word in _TERMINATORS:
        yield _Token("result", word)
        return
    m = _MOVE_NUMBER_RE.match(word)
    if m:
        word = word[m.end() :]
        if not word:
            return
    word = _ANNOTATION_RE.sub("", word)
    if not word or word.isdigit():
        if word.isdigit() and not complete:
            yield _Token("truncated", f"text ends inside move number {word!r}")
        return
    yield _Token("san", word, complete=complete)


# --- games -----------------------------------------------------------------------------------


def parse_pgn(
    text: str,
    source: str = "pgn",
    cache: MutableMapping[tuple[int, str], ParsedGame] | None = None,
    *,
    max_plies: int | None = MAX_PLIES,
    max_games: int | None = None,
) -> list[ParsedGame]:
    """Parse every game of a (multi-game) PGN text. Never raises.

    ``cache`` (owned by one feed) keeps the games of the previous text: when a
    round file changes, only the games whose text changed are parsed again. It
    is trimmed to the games of this text.

    Limits (None: none): a game with more than ``max_plies`` moves is refused
    (see :func:`parse_game`); past ``max_games`` games the rest are refused,
    unread, reported by one last entry (no snapshot, one issue naming them).
    """
    out: list[ParsedGame] = []
    parts = split_games(text)
    refused = 0
    if max_games is not None and len(parts) > max_games:
        refused = len(parts) - max_games
        parts = parts[:max_games]
    for index, part in enumerate(parts):
        g = cache.get((index, part)) if cache is not None else None
        if g is None:
            g = parse_game(part, source, index, max_plies)
        out.append(g)
    if cache is not None:
        cache.clear()
        cache.update(((g.index, g.text_key), g) for g in out)
    if refused:
        first, last = len(parts) + 1, len(parts) + refused
        where = f"game {first}" if refused == 1 else f"games {first}-{last}"
        message = (
            f"{len(parts) + refused} games in one text, more than the limit of "
            f"{max_games} (max_games): {refused} refused"
        )
        out.append(ParsedGame(len(parts), None, (PgnIssue(where, message),)))
    return out


def parse_game(
    text: str, source: str = "pgn", index: int = 0, max_plies: int | None = MAX_PLIES
) -> ParsedGame:
    """Parse one game's PGN text into the snapshot of its legal prefix. Never raises.

    A game with more than ``max_plies`` moves (None: no limit) comes back
    refused: no snapshot, one issue saying so; only its first ``max_plies``
    words of move text are read (no chess), so refusing a huge game is cheap.
    Pure and thread-safe: feeds call it (and :func:`parse_pgn`) off the event loop.
    """
    try:
        return replace(_parse_game(text, source, index, max_plies), text_key=text)
    except Exception as exc:  # a bug here must not stop a feed: report it as bad input
        where = f"game {index + 1}"
        return ParsedGame(
            index, None, (PgnIssue(where, f"unreadable game: {type(exc).__name__}: {exc}"),)
        )


def _parse_game(text: str, source: str, index: int, max_plies: int | None) -> ParsedGame:
    text = normalise_newlines(text)
    headers: dict[str, str] = {}
    order: list[tuple[str, str]] = []
    issues: list[PgnIssue] = []
    lines = text.split("\n")
    body_start = 0
    header_problem: str | None = None
    for ln, line in enumerate(lines):
        s = line.strip()
        if not s:
            body_start = ln + 1
            if headers:
                # blank line after the tags: the move text follows
                break
            continue
        if s.startswith("[") and not s.startswith("[%"):
            m = _TAG_RE.match(s)
            if m:
                name, value = m.group(1), m.group(2).replace('\\"', '"').replace("\\\\", "\\")
                headers[name] = value
                order.append((name, value))
            else:
                header_problem = f"unreadable tag line {s[:60]!r}"
            body_start = ln + 1
            continue
        body_start = ln
        break
    else:
        body_start = len(lines)
    where = describe_game(headers, index)
    if header_problem is not None:
        last_line = lines[body_start - 1].strip() if body_start > 0 else ""
        truncated = body_start >= len(lines) and not last_line.endswith("]")
        issues.append(PgnIssue(where, header_problem, truncated=truncated))
    movetext = "\n".join(lines[body_start:])
    # Tokens up to the result (or a cut), read before any chess: a game past
    # ``max_plies`` is refused for the cost of reading its first plies' text.
    toks: list[_Token] = []
    words = 0
    for tok in _tokens(movetext):
        toks.append(tok)
        if tok.kind in ("result", "truncated"):
            break
        if tok.kind == "san":
            words += 1
            if max_plies is not None and words > max_plies:
                issues.append(
                    PgnIssue(
                        where,
                        f"more than {max_plies} plies, the limit (max_plies): game refused",
                    )
                )
                return ParsedGame(index, None, tuple(issues), tuple(order), text=text)

    # Start position.
    fen = _text_or_none(headers.get("FEN"))
    chess960 = "960" in (headers.get("Variant") or "")
    try:
        board = chess.Board(fen, chess960=chess960) if fen else chess.Board(chess960=chess960)
        if fen and not board.is_valid():
            raise ValueError(f"not a legal position ({board.status()!r})")
    except ValueError as exc:
        issues.append(PgnIssue(where, f"invalid FEN {fen!r}: {exc}"))
        return ParsedGame(index, None, tuple(issues), tuple(order), text=text)
    first_white = board.turn == chess.WHITE
    first_number = board.fullmove_number

    sans: list[str] = []
    clocks: list[float | None] = []
    emts: list[float | None] = []
    movetext_result: str | None = None
    stopped = False
    saw_anything = False
    # From the first illegal move on: its issue and the raw tokens that follow.
    illegal: PgnIssue | None = None
    tail: list[str] = []
    tail_clocks: list[float | None] = []
    tail_emts: list[float | None] = []
    tail_cut = False
    for tok in toks:
        saw_anything = True
        if tok.kind == "comment":
            target = (tail_clocks, tail_emts) if stopped else (clocks, emts)
            if target[0] and (sans or stopped):
                cm = _CLK_RE.search(tok.text)
                if cm and target[0][-1] is None:
                    target[0][-1] = _hms(cm.group(1), cm.group(2), cm.group(3))
                em = _EMT_RE.search(tok.text)
                if em and target[1][-1] is None:
                    target[1][-1] = _hms(em.group(1), em.group(2), em.group(3))
            continue
        if tok.kind == "result":
            movetext_result = normalize_result(tok.text)
            break
        if tok.kind == "truncated":
            tail_cut = True
            issues.append(PgnIssue(where, tok.text, truncated=True))
            break
        if stopped:
            if not tok.complete:
                tail_cut = True
                issues.append(
                    PgnIssue(where, f"text ends inside {tok.text!r} (cut mid-move?)", True)
                )
            tail.append(tok.text)
            tail_clocks.append(None)
            tail_emts.append(None)
            continue
        ply = len(sans) + 1
        label = ply_label(ply, first_white, first_number)
        try:
            move = board.parse_san(tok.text)
        except ValueError as exc:
            stopped = True
            if not tok.complete:
                issues.append(
                    PgnIssue(
                        f"{where} ply {ply} ({label}{tok.text})",
                        f"incomplete move {tok.text!r} at the end (text cut mid-move?)",
                        truncated=True,
                    )
                )
                break
            kind = "illegal" if isinstance(exc, chess.IllegalMoveError) else "invalid"
            if isinstance(exc, chess.AmbiguousMoveError):
                kind = "ambiguous"
            illegal = PgnIssue(
                f"{where} ply {ply} ({label}{tok.text})",
                f"{kind} move {tok.text!r}; keeping the {len(sans)} moves before it",
            )
            tail.append(tok.text)
            tail_clocks.append(None)
            tail_emts.append(None)
            continue
        sans.append(board.san(move))
        board.push(move)
        clocks.append(None)
        emts.append(None)

    passed_through = 0
    after_illegal: tuple[str, ...] = ()
    if illegal is not None:
        if headers and len(tail) <= MAX_TRAILING_ILLEGAL and not tail_cut:
            # Trailing illegal moves (DGT's "kings in the centre" result signal, or a
            # last bad entry) go on to the game state as they are: it reads the signal,
            # or reports the move once with the board's identity.
            sans += tail
            clocks += tail_clocks
            emts += tail_emts
            passed_through = len(tail)
        else:
            if headers and not tail_cut:
                # The game went on after it (an illegal move that stood over the
                # board?): the rest goes on too, for the game state to judge.
                after_illegal = tuple(tail)
                illegal = replace(
                    illegal,
                    message=f"{illegal.message} ({len(tail) - 1} more after it, passed on)",
                )
            issues.insert(0, illegal)

    if not headers and not sans:
        if saw_anything or movetext.strip():
            first = f": {issues[0].message}" if issues else ""
            truncated = bool(issues) and issues[0].truncated
            issues = [
                PgnIssue(where, f"not a PGN game (no tags, no legal moves){first}", truncated)
            ]
        return ParsedGame(index, None, tuple(issues), tuple(order), text=text)

    header_result = normalize_result(headers.get("Result"))
    if headers.get("Result") is not None and header_result is None:
        issues.append(PgnIssue(where, f"unknown result {headers.get('Result')!r}, using '*'"))
    result = header_result or "*"
    if result == "*" and movetext_result not in (None, "*"):
        result = movetext_result or "*"

    rnd, board_no = split_round(headers.get("Round"), positive_number(headers.get("Board")))
    int_clocks = tuple(None if c is None else int(c) for c in clocks)
    clock_white = _side_clock(headers.get("WhiteClock"), int_clocks, first_white, chess.WHITE)
    clock_black = _side_clock(headers.get("BlackClock"), int_clocks, first_white, chess.BLACK)
    snap = GameSnapshot(
        source=source,
        white=player_from_headers(headers, "White"),
        black=player_from_headers(headers, "Black"),
        moves=tuple(sans),
        clocks=int_clocks,
        result=result,
        game_id=_text_or_none(headers.get("GameId")),
        event=_text_or_none(headers.get("Event")),
        round=rnd,
        board=board_no,
        initial_fen=fen if fen else None,
        tags=tuple(order),
        clock_white=clock_white,
        clock_black=clock_black,
        after_illegal=after_illegal,
    )
    return ParsedGame(
        index,
        snap,
        tuple(issues),
        tuple(order),
        tuple(clocks),
        tuple(emts),
        text,
        trailing_illegal=passed_through,
    )


def _side_clock(
    header: str | None, clocks: Sequence[int | None], first_white: bool, color: chess.Color
) -> int | None:
    if header is not None:
        t = parse_time(header)
        if t is not None:
            return int(t)
    start = 0 if (color == chess.WHITE) == first_white else 1
    for c in reversed(clocks[start::2]):
        if c is not None:
            return c
    return None


# --- writing ---------------------------------------------------------------------------------


def format_clock(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def game_to_pgn(
    headers: Sequence[tuple[str, str]],
    moves: Sequence[str],
    clocks: Sequence[float | None] = (),
    result: str = "*",
    initial_fen: str | None = None,
    emts: Sequence[float | None] = (),
) -> str:
    """Write a game as PGN (clocks as ``[%clk]`` comments); ``Result`` is overridden.

    ``moves`` are SAN from the start position (as in a snapshot; trailing illegal
    tokens are written as they are).
    """
    out: list[str] = []
    seen: set[str] = set()
    for name, value in headers:
        if name in seen:
            continue
        seen.add(name)
        if name == "Result":
            value = result
        out.append(f'[{name} "{_escape(value)}"]')
    if "Result" not in seen:
        out.append(f'[Result "{result}"]')
    board = chess.Board(initial_fen) if initial_fen else chess.Board()
    white_first = board.turn == chess.WHITE
    first_number = board.fullmove_number
    words: list[str] = []
    for ply, san in enumerate(moves):
        k = ply + (0 if white_first else 1)
        number = first_number + k // 2
        if k % 2 == 0:
            words.append(f"{number}.")
        elif ply == 0:
            words.append(f"{number}...")
        words.append(san)
        clk = clocks[ply] if ply < len(clocks) else None
        emt = emts[ply] if ply < len(emts) else None
        parts = []
        if clk is not None:
            parts.append(f"[%clk {format_clock(clk)}]")
        if emt is not None:
            parts.append(f"[%emt {format_clock(emt)}]")
        if parts:
            words.append("{" + " ".join(parts) + "}")
    words.append(result)
    return "\n".join(out) + "\n\n" + _wrap(words) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _wrap(words: Sequence[str], width: int = 79) -> str:
    lines: list[str] = []
    line = ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        lines.append(line)
    return "\n".join(lines)


def snapshot_key(snap: GameSnapshot, fallback: object) -> tuple[object, ...]:
    """A key to tell games of one feed apart between polls (never the file position alone).

    GameId when present, else round + board + players (FIDE ids when known).
    ``fallback`` (e.g. the URL or file) separates games that carry no identity at all.
    """
    if snap.game_id:
        return ("id", snap.game_id)
    white = snap.white.fide_id or snap.white.name
    black = snap.black.fide_id or snap.black.name
    return ("players", fallback, snap.event, snap.round, snap.board, white, black)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m livegain.feeds.pgn FILE.pgn``: read a PGN the way the feeds do.

    Prints each problem (game, ply, what), then the number of games and plies,
    the time of a cold parse and of a re-parse after one game changed (what a
    feed pays per poll when one board moves).
    """
    import sys
    import time

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m livegain.feeds.pgn FILE.pgn", file=sys.stderr)
        return 2
    try:
        with open(args[0], "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        print(f"{args[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    t0 = time.perf_counter()
    cache: dict[tuple[int, str], ParsedGame] = {}
    games = parse_pgn(text, "check", cache)
    cold = time.perf_counter() - t0
    for g in games:
        for issue in g.issues:
            print(f"{issue.where}: {issue.message}")
    parts = split_games(text)
    warm = 0.0
    if parts:
        parts[-1] += " "  # one game's text changes
        t0 = time.perf_counter()
        parse_pgn("\n\n".join(parts), "check", cache)
        warm = time.perf_counter() - t0
    plies = sum(len(g.snapshot.moves) for g in games if g.snapshot is not None)
    print(
        f"{len(games)} games, {plies} plies, "
        f"{sum(len(g.issues) for g in games)} problems; parse {cold * 1000:.0f} ms, "
        f"re-parse with one game changed {warm * 1000:.1f} ms "
        f"(x{cold / warm if warm else float('nan'):.0f})"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
