"""Moves and positions as feeds give them: SAN or UCI, pseudo-legal moves an
arbiter let stand, positions a DGT board reports, the start position a game
names, and small position keys."""

from __future__ import annotations

import re

import chess

from livegain.core.snapshot import GameSnapshot

UCI_MOVE = re.compile(r"^([a-h][1-8])([a-h][1-8])[qrbn]?$")


def is_standard_start(fen: str) -> bool:
    return fen.split()[:4] == chess.STARTING_FEN.split()[:4]


def position_key(fen: str) -> tuple[str, ...]:
    return tuple(fen.split()[:4])


def mover_white(fen_after: str) -> bool:
    # After White's move it is Black's turn.
    return fen_after.split()[1] == "b"


def parse_move(board: chess.Board, token: str) -> chess.Move | None:
    if not token:
        return None
    tok = token
    if UCI_MOVE.match(tok):
        try:
            move = board.parse_uci(tok)
        except ValueError:
            move = None
        if move is not None:
            return move
    try:
        return board.parse_san(tok)
    except ValueError:
        return None


LOOSE_SAN = re.compile(
    r"^([KQRBN])?([a-h])?([1-8])?[x:]?([a-h][1-8])(?:=?([QRBNqrbn]))?[+#]?[!?]*$"
)


def pseudo_legal(board: chess.Board, token: str) -> chess.Move | None:
    """The one pseudo-legal move (legal but for the king's safety: a king moved
    into check, a pinned piece moved, castling through check) that ``token``
    names, or None. What an arbiter may have let stand over the board."""
    tok = token.strip()
    candidates: list[chess.Move] = []
    u = UCI_MOVE.match(tok)
    if u:
        with_uci = chess.Move.from_uci(tok)
        if board.is_pseudo_legal(with_uci):
            return with_uci
    castle = tok.rstrip("+#!?").replace("0", "O")
    if castle in ("O-O", "O-O-O"):
        king = board.king(board.turn)
        for c in board.generate_castling_moves():
            if king is not None and (chess.square_file(c.to_square) > chess.square_file(king)) == (
                castle == "O-O"
            ):
                candidates.append(c)
        return candidates[0] if len(candidates) == 1 else None
    m = LOOSE_SAN.match(tok)
    if not m:
        return None
    piece = chess.PIECE_SYMBOLS.index(m.group(1).lower()) if m.group(1) else chess.PAWN
    file_ = chess.FILE_NAMES.index(m.group(2)) if m.group(2) else None
    rank = chess.RANK_NAMES.index(m.group(3)) if m.group(3) else None
    to = chess.parse_square(m.group(4))
    promo = chess.PIECE_SYMBOLS.index(m.group(5).lower()) if m.group(5) else None
    for mv in board.generate_pseudo_legal_moves(to_mask=chess.BB_SQUARES[to]):
        if board.piece_type_at(mv.from_square) != piece or mv.promotion != promo:
            continue
        if board.is_castling(mv):
            continue
        if file_ is not None and chess.square_file(mv.from_square) != file_:
            continue
        if rank is not None and chess.square_rank(mv.from_square) != rank:
            continue
        candidates.append(mv)
    return candidates[0] if len(candidates) == 1 else None


def reported_position(before: chess.Board, text: str) -> chess.Board | None:
    """The position a feed reports after a move played from ``before``, or None when
    it is no usable position. ``text`` is a FEN or a piece placement only (what a DGT
    board sends). The side to move is the other side (the move list alternates);
    castling rights are those of ``before`` that the new placement still allows."""
    text = text.strip()
    if not text or len(text) > 100:
        return None
    after = before.copy(stack=False)
    try:
        if " " in text:
            after.set_fen(text)
        else:
            after.set_board_fen(text)
            after.castling_rights = before.castling_rights
            after.ep_square = None
            after.halfmove_clock = 0
            if before.turn == chess.BLACK:
                after.fullmove_number = before.fullmove_number + 1
    except ValueError:
        return None
    after.chess960 = before.chess960
    if after.turn == before.turn:  # the list alternates, whatever the feed's FEN says
        after.turn = not before.turn
        after.ep_square = None
    after.castling_rights &= before.castling_rights
    after.clean_castling_rights()
    if after.king(chess.WHITE) is None or after.king(chess.BLACK) is None:
        return None
    if after.board_fen() == before.board_fen():
        return None  # nothing moved: no move
    return after


def diff_uci(before: chess.Board, after: chess.Board) -> str:
    """The move between two positions as UCI when one piece of the mover left one
    square for another (for overlays' last-move squares), else ``0000``."""
    mover = before.turn
    was, now = before.occupied_co[mover], after.occupied_co[mover]
    gone, came = list(chess.SquareSet(was & ~now)), list(chess.SquareSet(now & ~was))
    if len(gone) == 1 and len(came) == 1:
        return chess.square_name(gone[0]) + chess.square_name(came[0])
    return "0000"


def start_position(snap: GameSnapshot) -> tuple[str, bool]:
    """The position a snapshot's game starts from and whether it is Chess960:
    its initial FEN (or ``FEN`` tag; none: the standard start) and its
    ``Variant`` tag or castling rights. ValueError, naming the FEN, when it
    is no position (unreadable, or a king missing)."""
    tags = dict(snap.tags)
    fen = (snap.initial_fen or "").strip() or tags.get("FEN", "").strip()
    variant = tags.get("Variant", "").lower()
    tag960 = "960" in variant or "fischer" in variant
    if not fen:
        return chess.STARTING_FEN, tag960
    try:
        b = chess.Board(fen, chess960=True)
    except ValueError as exc:
        raise ValueError(f"bad initial FEN {fen!r}: {exc}") from None
    if b.king(chess.WHITE) is None or b.king(chess.BLACK) is None:
        raise ValueError(f"bad initial FEN {fen!r}: a king is missing")
    chess960 = tag960 or b.has_chess960_castling_rights()
    b.chess960 = chess960
    return b.fen(), chess960
