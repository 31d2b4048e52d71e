"""The planning engine: the pass and its phases' shared parts — config, seed documents, the JSONL
history and the state derived from it, the pass result, prompts and the model client.

It imports nothing from the CI layer, the CLI, storage or any phase package."""
