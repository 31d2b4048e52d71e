"""The command line (`planner run|history|demo|…`) and the demo; the outermost layer."""
