"""The fixed steps of a pass — plan, execute a task, complete, and legacy mode — one module each."""
