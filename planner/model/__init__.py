"""Between planner and the model endpoint: requests and retries (llm), streaming, tool calls,
the conversation's messages, the context window, and replies read as file edits (file_blocks,
definitions, hunks)."""
