"""What keeps the programs the model starts away from planner's secrets and trusted files: another
user, a scrubbed environment, a locked checkout, ended leftovers."""
