"""The plan the model writes: its documents (plan, tasks, completion), clarifications asked of
people, the guard that keeps a task's tools moving towards its change, and plan repair."""
