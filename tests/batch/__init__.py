"""Tests of livegain.batch."""
