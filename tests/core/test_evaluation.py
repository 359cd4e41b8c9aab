from livegain.core.evaluation import CLIP_CP, checkmated_score, gain, gains, white_score


def test_clip_and_mate() -> None:
    assert white_score(cp=5000) == CLIP_CP
    assert white_score(cp=-4100) == -CLIP_CP
    assert white_score(mate=3) == CLIP_CP
    assert white_score(mate=-1) == -CLIP_CP
    assert checkmated_score(white_is_mated=True) == -CLIP_CP


def test_gain_signs_follow_the_mover() -> None:
    assert gain(12, 7, mover_is_white=True) == -5
    assert gain(7, 23, mover_is_white=False) == -16
    assert gains([0, 12, 12, 7]) == [12, 0, -5]
