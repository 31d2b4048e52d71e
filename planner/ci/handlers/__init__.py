"""One module per kind of event; planner.ci.job's table names them."""
