"""Assembles one pass: the phases registered in order, the tools, the model and the history store.
Shared by the CLI, the demo and the CI layer."""
