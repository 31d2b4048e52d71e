"""Plans grounded in the repository (issue 16): the repository map and the bounded
exploration shown to the model before it plans."""

from planner.grounding.context import Grounding

__all__ = ["Grounding"]
