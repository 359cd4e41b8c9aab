"""Tests of livegain.models."""
