"""The work outlives the job: the branch as the durable copy of the pass's work, and
cancellation that ends the pass the ordinary way."""
