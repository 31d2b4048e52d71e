"""The model's side of a replan decision: what its prompt is told and what its decision says."""
