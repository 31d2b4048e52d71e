"""MCP servers as tools: which servers a pass starts and the host that drives their sessions."""
