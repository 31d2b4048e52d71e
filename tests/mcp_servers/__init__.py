"""MCP servers for the tests: our own small ones, and how to launch the real third-party ones."""
