"""Helpers shared by the tests (no network, stdlib only)."""
