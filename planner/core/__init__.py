"""What every layer shares and nothing else: the error taxonomy (errors), the protocols between
the layers (interfaces: model, tools, forge, history backend), the names of the tools, and the
catalogue of every message planner shows a user, with its code (catalogue).

Imports nothing of planner."""
