"""run_command, and what a command left in the working tree (judged by its effect, rolled back by
the approval gate)."""
