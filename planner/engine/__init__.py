"""The planning engine: the pass loop (coordinator, steps/) and the phase interface (phase,
context), plus the two phases every pass has (reflection, checkpoints).

It imports the packages below it (model, memory, outcome, plan, config, text, core) and no
layer above (tools, phase packages, run, storage, CI, CLI)."""
