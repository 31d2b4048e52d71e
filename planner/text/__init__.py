"""Text that crosses a trust boundary: untrusted issue text fenced and sanitised for prompts
(issue, prompts), secrets redacted (redaction), forge posts made inert (inert, markdown: every
comment planner posts goes through inert), words as relevance checks see them (words).

Imports nothing of planner."""
