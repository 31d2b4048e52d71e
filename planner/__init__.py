"""planner: an LLM agent that plans before it acts, driven by issues."""

__version__ = "0.1.0"
