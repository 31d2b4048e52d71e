"""Phase package: the repository's tests as part of the pass (docs/verification.md).

The two phases live here (phase: VerificationPhase; candidate_phase: CandidatePhase), with the
test runs of a pass they share (runs: PassTests); the stages they run live in three
sub-packages: suite/ (running the repository's tests), reproduction/ (the issue's own test)
and fixes/ (candidate fixes chosen by tests)."""
