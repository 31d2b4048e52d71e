"""The fake GitHub's GraphQL endpoint (/api/graphql, as on GitHub Enterprise Server).

Every document is validated against GitHub's published schema (npm @octokit/graphql-schema,
installed under tests/node) and executed there by graphql-js (tests/node/github-graphql.mjs)
over a snapshot of the fake's data: a field the schema lacks, a wrong argument or a variable
of the wrong type is refused the way GitHub refuses it, and the reply holds exactly what the
query selects. Mutations are carried out by the fake (review thread replies and resolving)
after the document was validated. Problems are also collected in `fake.openapi_problems`, which
fails the test at teardown.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

HELPER = Path(__file__).resolve().parent.parent / "node" / "github-graphql.mjs"
PATH = "/api/graphql"
JSON = Any


class GraphQLEndpoint:
    def __init__(self, resolvers: dict[str, Any], problems: list[str]) -> None:
        self.resolvers = resolvers
        """Root field -> function(args) returning the field's value (a plain JSON object)."""
        self.problems = problems
        self.calls: list[dict[str, Any]] = []
        """Each request: operationName, query, variables, and the operation's kind."""
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def answer(self, body: JSON) -> tuple[JSON, bool]:
        """(the reply, whether the request was a mutation)."""
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return {"message": "Problems parsing JSON"}, False
        request = {
            "query": body["query"],
            "variables": body.get("variables") or {},
            "operationName": body.get("operationName"),
        }
        inspected = self._ask({**request, "inspect": True})
        if inspected.get("errors"):
            self.problems.append(f"GraphQL {body.get('operationName')}: {inspected['errors']}")
            return {"errors": inspected["errors"]}, False
        mutation = inspected["operation"] == "mutation"
        self.calls.append({**request, "mutation": mutation})
        root: dict[str, Any] = {}
        errors = []
        for field in inspected["fields"]:
            resolver = self.resolvers.get(field["name"])
            if resolver is None:
                self.problems.append(f"GraphQL: the fake has no {field['name']}")
                return {"errors": [{"message": f"the fake has no {field['name']}"}]}, mutation
            value, error = resolver(field["args"])
            root[field["name"]] = value
            if error:
                errors.append({"type": "NOT_FOUND", "path": [field["name"]], "message": error})
        reply = self._ask({**request, "root": root})
        if reply.get("errors"):
            self.problems.append(f"GraphQL {body.get('operationName')}: {reply['errors']}")
        return ({**reply, "errors": errors} if errors else reply), mutation

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._process is None:
                self._process = subprocess.Popen(
                    ["node", str(HELPER)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    cwd=HELPER.parent,
                )
            assert self._process.stdin is not None and self._process.stdout is not None
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise AssertionError("the GraphQL helper (tests/node/github-graphql.mjs) died")
        reply: dict[str, Any] = json.loads(line)
        return reply
