"""How a pass ends: its result and status (result), the signals that stop or redirect it
(flow: StopPass, PlanChanged), the run's deadline, and the test evidence a result carries
(evidence: the verification record every part of a pass reads back from the history)."""
