"""What becomes of a replan decision: checked, carried out or escalated, its questions filtered,
recorded and told to the people on the issue."""
