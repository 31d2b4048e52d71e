"""The issue's memory: the JSONL history and its entries, the state derived from it, digests of
it for prompts, and the count of questions asked."""
