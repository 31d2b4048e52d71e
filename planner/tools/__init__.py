"""Tools the model can call: built-in workspace tools and MCP servers, behind one registry
(`registry.py`), assembled for a pass by `build.py`.

Nothing is imported here: the container's entry point imports `tools.sandbox.process` on the
skip path, which must not load the model client, MCP or the forges (test_action_github)."""
