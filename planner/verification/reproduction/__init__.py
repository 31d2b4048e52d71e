"""The issue's own test: written from the issue (issue_test), the calls the issue states
(stated_calls), and transcripts of them run (transcript)."""
