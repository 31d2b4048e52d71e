"""What every layer shares and nothing else: the error taxonomy (errors), the protocols between
the layers (interfaces: model, tools, forge, history backend) and the names of the tools.

Imports nothing of planner."""
