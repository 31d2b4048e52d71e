"""Tools the model can call: built-in workspace tools and MCP servers, behind one registry."""

from planner.tools.build import build_registry
from planner.tools.registry import ToolRegistry

__all__ = ["ToolRegistry", "build_registry"]
