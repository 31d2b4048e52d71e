"""What planner shows: the tracking comment (its plan graph, usage and cost), a planning
session's comment, the job summary, and what the job tells the CI system."""
