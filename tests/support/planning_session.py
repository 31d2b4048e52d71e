"""Scripted model replies of one interactive planning session: 3 questions, 2 decision points,
a summary, and a revised design after a rejection. Shared by the tests and the benchmark."""

from __future__ import annotations

from typing import Any

from planner.testing.steps import Step, reply_json

QUESTIONS: dict[str, Any] = {
    "questions": [
        {
            "type": "clarification",
            "question": "Who must be able to log in?",
            "context": "Decides whether self-service sign-up is needed.",
            "options": [],
        },
        {
            "type": "technical",
            "question": "Where should the accounts be stored?",
            "context": "The store decides the migration work.",
            "options": ["PostgreSQL", "SQLite"],
        },
        {
            "type": "priority",
            "question": "What matters more: speed of delivery or hardening?",
            "context": "Trades scope against time.",
            "options": [],
        },
    ]
}


def option(name: str, recommended: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"Use {name}.",
        "pros": [f"{name} is well known"],
        "cons": [f"{name} needs care"],
        "recommended": recommended,
    }


DESIGN: dict[str, Any] = {
    "decisions": [
        {"topic": "Session handling", "options": [option("JWT", True), option("Server cookies")]},
        {"topic": "Password hashing", "options": [option("bcrypt"), option("argon2", True)]},
    ]
}
REVISED: dict[str, Any] = {
    "decisions": [
        {"topic": "Session handling", "options": [option("Server cookies", True), option("JWT")]},
        {"topic": "Password hashing", "options": [option("argon2", True), option("scrypt")]},
    ]
}
SUMMARY = {"design_summary": "Staff log in with server cookies; passwords hashed with argon2."}
REVISED_SUMMARY = {"design_summary": "Server cookies and argon2, kept minimal as asked."}


def discovery_step(**kwargs: Any) -> Step:
    return reply_json("interactive_discovery", QUESTIONS, **kwargs)


def design_step(document: dict[str, Any] = DESIGN, **kwargs: Any) -> Step:
    return reply_json("interactive_design", document, **kwargs)


def review_step(document: dict[str, Any] = SUMMARY, **kwargs: Any) -> Step:
    return reply_json("interactive_review", document, **kwargs)


def user_prompt(body: dict[str, Any]) -> str:
    """The last user message of a chat request body."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    return str(users[-1]["content"])


def run_instruction(body: dict[str, Any]) -> str:
    """The fenced "instruction for this run" of a planning request."""
    prompt = user_prompt(body)
    start = prompt.index('<untrusted-data source="instruction for this run">')
    return prompt[start : prompt.index("</untrusted-data>", start)]
