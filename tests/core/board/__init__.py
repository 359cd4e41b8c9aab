"""Tests of livegain.core.board."""
