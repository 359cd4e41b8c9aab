"""The registry of boards: every board of every feed, snapshots matched to
boards, evaluations routed to them."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import replace

from livegain.core.board.board import DEFAULT_MAX_PLIES, BoardGame
from livegain.core.board.identity import (
    Identity,
    board_slug,
    describe_snapshot,
    identity,
    is_known,
    player_match,
    round_board,
    surname,
)
from livegain.core.board.matching import IndexKey, board_keys, indexed_names, side_keys
from livegain.core.board.updates import (
    Applied,
    BoardError,
    BoardModels,
    BoardUpdate,
    EvalRequest,
)
from livegain.core.evaluation import (
    Evaluation,
)
from livegain.core.histogram import GainHistogram
from livegain.core.human_wdl import HumanWdlModel
from livegain.core.perceived import PerceivedModel
from livegain.core.snapshot import (
    GameSnapshot,
)
from livegain.core.wdl import DEFAULT_DRAW_SHARE

DEFAULT_MAX_BOARDS = 1000


class BoardRegistry:
    """All boards of all feeds: matches snapshots to boards, routes evaluations.

    ``engine_rating`` is r_e for Algorithm 4; ``engine`` the engine's gain
    histogram (None: a single peak at 0); ``draw_share`` the draw split of the
    win-chance model (:mod:`livegain.core.wdl`); ``model`` the calibrated
    perceived-rating model every board uses (None: Algorithm 4 only);
    ``wdl_model`` the human W/D/L model every board shows (None: the
    engine's); ``choose_models`` picks both per board from its snapshots
    instead (:class:`BoardModels`).
    """

    def __init__(
        self,
        engine_rating: float,
        engine: GainHistogram | None = None,
        *,
        draw_share: float = DEFAULT_DRAW_SHARE,
        max_errors_kept: int = 20,
        model: PerceivedModel | None = None,
        max_plies: int | None = DEFAULT_MAX_PLIES,
        max_boards: int | None = DEFAULT_MAX_BOARDS,
        wdl_model: HumanWdlModel | None = None,
        choose_models: Callable[[GameSnapshot], BoardModels] | None = None,
    ) -> None:
        self.engine_rating = float(engine_rating)
        self.engine = engine
        self.model = model
        self.wdl_model = wdl_model
        self.choose_models = choose_models
        self.draw_share = draw_share
        self.max_errors_kept = max_errors_kept
        self.max_plies = max_plies
        self.max_boards = max_boards
        self.boards: dict[str, BoardGame] = {}
        self._by_game_id: dict[tuple[str, str], str] = {}
        self._match_cache: dict[tuple[object, ...], str] = {}
        self.errors: deque[BoardError] = deque(maxlen=max_errors_kept)
        self.unmatched = 0
        self.refused = 0
        self._changed: dict[str, None] = {}  # boards with new positions, in order
        self._multi: dict[str, None] = {}  # boards shown by more than one source
        # The matching index: board ids under each key of board_keys, each
        # board's keys, and its creation number (the order of self.boards).
        self._index: dict[IndexKey, dict[str, None]] = {}
        self._index_keys: dict[str, frozenset[IndexKey]] = {}
        self._order: dict[str, int] = {}
        self._created = 0

    def board(self, board_id: str) -> BoardGame:
        return self.boards[board_id]

    # -- matching -----------------------------------------------------------
    def match(self, snap: GameSnapshot) -> str | None:
        """The id of the board this snapshot belongs to, or None for a new board."""
        return self._match(snap, identity(snap))

    def _match(self, snap: GameSnapshot, ident: Identity) -> str | None:
        src = snap.source
        wkey, bkey, rnd, board_no = ident
        # Game ids count in matching unless the feed has shown it renumbers games.
        trust_ids = True
        by_id: str | None = None
        if snap.game_id:
            found = self._by_game_id.get((src, snap.game_id))
            if found is not None:
                g = self.boards[found]
                if player_match(g.white_key, wkey) and player_match(g.black_key, bkey):
                    return found
                own = g.seen_as.get(src)
                if own is not None and player_match(own[0], wkey) and player_match(own[1], bkey):
                    return found
                # That id now names a game with other players. Either the feed numbers
                # its games by position (LiveChess Cloud: pairing index) and these
                # players have their board elsewhere, or names were corrected / a new
                # game took over the id: then the id's board it is.
                trust_ids = False
                by_id = found
        cache_key = (src, snap.game_id, rnd, board_no, wkey, bkey)
        hit = self._match_cache.get(cache_key)
        if hit is not None:
            g = self.boards[hit]
            # A perfect match (both players known and equal, same board) stays perfect
            # while the board's players, round and number are unchanged.
            if g.seen_as.get(src) == ident:
                return hit
        best: tuple[int, bool] | None = None
        best_id: str | None = None
        full: list[BoardGame] = []
        for g in self._candidates(src, snap.group, ident):
            score = _score(g, snap, ident, trust_ids)
            if score is None:
                continue
            if score[0] == 4:
                full.append(g)
            if best is None or score > best:
                best, best_id = score, g.board_id
        if by_id is not None and (best is None or best[0] < 4):
            return by_id
        if best is None:
            return None
        if best[0] == 4 and not best[1] and len(full) > 1 and board_no is not None:
            # The same pairing twice in one round (tiebreak games), none on this board.
            return None
        if best == (4, True) and best_id is not None:
            self._match_cache[cache_key] = best_id
        return best_id

    def _candidates(self, src: str, group: str | None, ident: Identity) -> Iterable[BoardGame]:
        """The boards :meth:`_match` looks at, in the order of :attr:`boards`: every
        board that can match a snapshot of ``src`` (of event ``group``) naming its
        game ``ident``, and maybe others. Each of these sets holds them all, and the
        one with fewest boards is taken: the boards of the source and of its group;
        those with the snapshot's white player (known), or an unknown one; the
        same for black; those with its board number when neither player is known
        (a board then needs the number to match)."""
        wkey, bkey, _, board_no = ident
        choices: list[list[IndexKey]] = [[("s", src)]]
        if group is not None:
            choices[0].append(("g", group))
        if is_known(wkey):
            choices.append([*side_keys("w", wkey), ("w?", "")])
        if is_known(bkey):
            choices.append([*side_keys("b", bkey), ("b?", "")])
        if not is_known(wkey) and not is_known(bkey):
            choices.append([("n", board_no)] if board_no is not None else [])
        index = self._index
        size, keys = len(self.boards), choices[0]
        for ks in choices:
            n = sum(len(index.get(k, ())) for k in ks)
            if n < size:
                size, keys = n, ks
        if 2 * size >= len(self.boards):
            return self.boards.values()  # most of them: not worth sorting
        found: set[str] = set()
        for k in keys:
            found.update(index.get(k, ()))
        return [self.boards[bid] for bid in sorted(found, key=self._order.__getitem__)]

    def _reindex(self, bid: str) -> None:
        """File board ``bid`` under its keys now (after any change to its sources,
        group, players or board number); a removed board leaves the index."""
        game = self.boards.get(bid)
        keys = board_keys(game) if game is not None else frozenset()
        old = self._index_keys.get(bid, frozenset())
        if keys == old:
            return
        for k in old - keys:
            ids = self._index[k]
            del ids[bid]
            if not ids:
                del self._index[k]
        for k in keys - old:
            self._index.setdefault(k, {})[bid] = None
        if game is None:
            self._index_keys.pop(bid, None)
        else:
            self._index_keys[bid] = keys

    def _new_id(self, snap: GameSnapshot) -> str:
        src = board_slug(snap.source, 24)
        rnd, board_no = round_board(snap)
        if snap.game_id:
            base = f"{src}-g{board_slug(snap.game_id)}"
        elif rnd is not None and board_no is not None:
            base = f"{src}-r{board_slug(rnd, 12)}-b{board_no}"
        else:
            r = f"-r{board_slug(rnd, 12)}" if rnd is not None else ""
            base = (
                f"{src}{r}-{board_slug(surname(snap.white), 20)}"
                f"-{board_slug(surname(snap.black), 20)}"
            )
        bid, n = base, 1
        while bid in self.boards:
            n += 1
            bid = f"{base}-{n}"
        return bid

    # -- snapshots ------------------------------------------------------------
    def apply(self, snap: GameSnapshot, now: float | None = None) -> Applied:
        """Fold a feed's snapshot into the board it belongs to (creating it if new).

        A game longer than ``max_plies`` is refused (its board, if any, keeps
        what it had), and so is a new board beyond ``max_boards``: each with
        an error naming the game, counted in :attr:`refused`.

        ``now`` (seconds on the caller's clock; default: the snapshot's
        ``received_at``) times a source's takeover of a board it shares with
        other sources of its event group (:meth:`BoardGame.offer`).
        """
        if now is None:
            now = snap.received_at
        ident = identity(snap)
        bid = self._match(snap, ident)
        new = False
        if self.max_plies is not None and len(snap.moves) > self.max_plies:
            return self._refuse(
                bid,
                snap,
                f"{len(snap.moves)} plies, more than the limit of {self.max_plies} "
                "(limits.max_plies): refused",
            )
        if bid is None and self.max_boards is not None and len(self.boards) >= self.max_boards:
            return self._refuse(
                None,
                snap,
                f"already {len(self.boards)} boards, the limit (limits.max_boards): "
                "new board refused",
            )
        if bid is None:
            made = self._create(snap)
            if isinstance(made, Applied):
                return made
            bid, new = made, True
        game = self.boards[bid]
        named = None if new else indexed_names(game)
        try:
            if snap.group is not None and game.group is None:
                game.group = snap.group  # a board restored without its group joins it again
            version = game.version
            applied = game.offer(snap, now)
            if new:
                applied = replace(applied, new_board=True, info_changed=True)
            if new or game.version != version:
                self._changed[bid] = None
            src = snap.source
            if snap.game_id:
                self._by_game_id[(src, snap.game_id)] = bid
                game.game_ids[src] = snap.game_id
            if game.seen_as.get(src) != ident:
                game.seen_as[src] = ident
                named = None
                if len(game.seen_as) > 1:
                    self._multi[bid] = None
        finally:
            if named != indexed_names(game):  # new sources, group, players or board number
                self._reindex(bid)
        return applied

    def _create(self, snap: GameSnapshot) -> str | Applied:
        """A new board for ``snap`` (its id), or the error when nothing tells
        its game from others."""
        _, board_no = round_board(snap)
        if (
            not snap.game_id
            and not (is_known(snap.white) or is_known(snap.black))
            and (board_no is None)
        ):
            err = BoardError(
                None,
                snap.source,
                "game has no GameId, no known players and no board number: cannot "
                "tell it from other games, ignored",
            )
            self.errors.append(err)
            self.unmatched += 1
            return Applied(None, errors=(err,))
        bid = self._new_id(snap)
        self.boards[bid] = BoardGame(
            bid,
            snap.source,
            self.engine_rating,
            self.engine,
            self.draw_share,
            self.max_errors_kept,
            model=self.model,
            group=snap.group,
            wdl_model=self.wdl_model,
            choose_models=self.choose_models,
        )
        self._order[bid] = self._created
        self._created += 1
        return bid

    def tick(self, now: float) -> list[Applied]:
        """Hand each board shown by several sources to a waiting one whose
        ``takeover_after`` ran out by ``now`` (seconds on the clock the snapshots'
        ``received_at`` or :meth:`apply`'s ``now`` use). Call it every second or
        so: a takeover then does not wait for that source's next change."""
        out: list[Applied] = []
        for bid in list(self._multi):
            game = self.boards.get(bid)
            if game is None:
                del self._multi[bid]
                continue
            version = game.version
            named = indexed_names(game)
            try:
                res = game.tick(now)
            finally:
                if named != indexed_names(game):  # a takeover applies the new source's names
                    self._reindex(bid)
            if res is None:
                continue
            if game.version != version:
                self._changed[bid] = None
            out.append(res)
        return out

    def _refuse(self, bid: str | None, snap: GameSnapshot, why: str) -> Applied:
        message = f"game {describe_snapshot(snap)}: {why}"
        game = self.boards.get(bid) if bid is not None else None
        # Counted on the board when it has one (its errors show in /healthz).
        err = BoardError(None, snap.source, message) if game is None else game.record_error(message)
        self.errors.append(err)
        self.refused += 1
        return Applied(bid if game is not None else None, errors=(err,))

    # -- evaluations -----------------------------------------------------------
    def pending(self, limit: int | None = None) -> list[EvalRequest]:
        """Positions needing an evaluation, most urgent first.

        Every board's current position has priority 0; then each board's
        missing positions from the oldest, priority 1, 2, ... so that the
        boards' backfill is interleaved. Ties keep board creation order.
        """
        return list(itertools.islice(self.iter_pending(), limit))

    def iter_pending(self) -> Iterator[EvalRequest]:
        """:meth:`pending`, built only as far as it is read: a caller that
        needs the first few pays for those (and one look at each board)."""
        return itertools.chain(self.iter_latest(), self.iter_backfill())

    def iter_latest(self, only: Collection[str] | None = None) -> Iterator[EvalRequest]:
        """Each board's current position when it needs an evaluation (priority 0);
        ``only``: of those boards only (in the registry's order all the same)."""
        for g in self._boards_of(only):
            r = next(g.iter_requests(backfill=False), None)
            if r is not None:
                yield r

    def iter_backfill(self, only: Collection[str] | None = None) -> Iterator[EvalRequest]:
        """Every other missing position (priority 1, 2, ...), boards interleaved
        (``only``: of those boards only):
        each board's oldest missing position, then each board's next one, ...
        Read as far as needed, so the first few cost a look at the first boards only.

        Evaluations may be recorded while this is read (the scheduler answers
        some from the store as it goes): each board's missing positions are
        taken when the scan first reaches it, and those evaluated since are
        skipped, so none is passed over. (Ranks counted afresh on every turn
        would shift under such a recording and skip a position.)
        """
        scans = [(g, g.iter_requests(latest=False)) for g in self._boards_of(only)]
        while scans:
            left: list[tuple[BoardGame, Iterator[EvalRequest]]] = []
            for g, reqs in scans:
                for r in reqs:
                    if g.eval_at(r.ply) is None:
                        left.append((g, reqs))
                        yield r
                        break
            scans = left

    def _boards_of(self, only: Collection[str] | None) -> list[BoardGame]:
        """The boards, or those of ``only``, in the registry's order (a copy)."""
        if only is None:
            return list(self.boards.values())
        return [g for bid, g in self.boards.items() if bid in only]

    def pending_count(self) -> int:
        """``len(pending())`` without building the list."""
        return sum(g.pending_count for g in self.boards.values())

    def take_changed(self) -> list[str]:
        """Boards that gained positions (new moves, a correction, a new board)
        since the last call, in order; the list starts empty again."""
        out = list(self._changed)
        self._changed.clear()
        return [bid for bid in out if bid in self.boards]

    def record_eval(self, board_id: str, ply: int, fen: str, ev: Evaluation) -> list[BoardUpdate]:
        """Record an evaluation of the position at ``ply`` (0 = start) of a board.

        Ignored (returns ``[]``) when the board is unknown, when ``fen`` is no
        longer the position at that ply (a correction came first), or when
        the ply already has an evaluation.
        """
        return self.record_evals(board_id, [(ply, fen, ev)])

    def record_evals(
        self, board_id: str, evals: Sequence[tuple[int, str, Evaluation]]
    ) -> list[BoardUpdate]:
        """:meth:`record_eval` for several positions of one board at once
        (:meth:`BoardGame.record_evals`)."""
        game = self.boards.get(board_id)
        if game is None:
            return []
        return game.record_evals(evals)

    def remove(self, board_id: str) -> bool:
        """Forget a board (an operator's removal, or an expired one); False when
        unknown. A later snapshot of the same game makes a new board."""
        if self.boards.pop(board_id, None) is None:
            return False
        self._changed.pop(board_id, None)
        self._multi.pop(board_id, None)
        self._reindex(board_id)
        del self._order[board_id]
        for key in [k for k, v in self._by_game_id.items() if v == board_id]:
            del self._by_game_id[key]
        for ckey in [k for k, v in self._match_cache.items() if v == board_id]:
            del self._match_cache[ckey]
        return True


def _score(
    g: BoardGame, snap: GameSnapshot, ident: Identity, trust_ids: bool
) -> tuple[int, bool] | None:
    """How well board ``g`` matches a snapshot naming its game ``ident``: the
    players' match (2 to 4) and whether the board number agrees; None when
    it cannot be this snapshot's board. ``trust_ids``: a game id that differs
    rules the board out."""
    src = snap.source
    group = snap.group
    wkey, bkey, rnd, board_no = ident
    # A board's own sources, and the other sources of its event group.
    if g.source != src and src not in g.seen_as and (group is None or g.group != group):
        return None
    if rnd is not None and g.round is not None and g.round != rnd:
        return None
    gid = g.game_ids.get(src) if g.group is not None else g.game_id
    if trust_ids and snap.game_id and gid and gid != snap.game_id:
        return None
    w = player_match(g.white_key, wkey)
    b = player_match(g.black_key, bkey)
    own = g.seen_as.get(src)  # what this source called the game before
    if own is not None and (own[0], own[1]) != (g.white_key, g.black_key):
        ow = player_match(own[0], wkey)
        ob = player_match(own[1], bkey)
        if ow and ob and (w == 0 or b == 0 or ow + ob > w + b):
            w, b = ow, ob
    if w == 0 or b == 0:
        return None
    same_board = board_no is not None and (
        g.board == board_no or (own is not None and own[3] == board_no)
    )
    if (
        not same_board
        and own is not None
        and board_no is not None
        and g.result != "*"
        and len(snap.moves) != g.plies
    ):
        # This source showed this pair's finished game on another board, and
        # shows another game now: a knockout's next game, not a renumbering
        # (a finished game renumbered comes with all its moves).
        return None
    if w + b == 2 and not same_board:
        return None  # nobody known on either side: only the board number can tell
    return (w + b, same_board)
