"""Test helpers for planner: scripted stand-ins for external services. The scripted
OpenAI-compatible server (scripted_server) answers from a script of steps (steps), validates
each request as the real API does (protocol) and answers in the API's shape (completions)."""
