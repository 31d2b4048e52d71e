"""The planning engine: the pass loop and the phase interface, plus what every phase shares —
config, seed documents, the JSONL history and its state, the pass result, prompts, the model client.

It imports no other layer of planner (tools, phase packages, run, storage, CI, CLI)."""
