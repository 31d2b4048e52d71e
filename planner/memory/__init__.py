"""The issue's memory: the JSONL history and its entries, the state derived from it, digests of
it for prompts, the plan read back as a pass result (plan_view), and the count of questions
asked."""
