"""Test helpers for planner: scripted stand-ins for external services."""
