"""Tests of livegain.mqtt."""
