#!/usr/bin/env python3
"""Regenerate tests/fixtures/github/ from pinned @octokit npm packages.

Installs @octokit/webhooks-examples and @octokit/openapi into a temporary directory with
`npm install --no-save --prefix <tmp>`, then writes:

- tests/fixtures/github/webhooks/<event>.<action>.json: real example payloads;
- tests/fixtures/github/openapi-subset.json: the REST operations the forge layer calls, with
  every `$ref` they need (response `examples` dropped to keep it small);
- tests/fixtures/github/SOURCE.md: versions, provenance and the command to regenerate.

Needs npm and the npm registry; the tests only read the committed outputs.
Usage: python scripts/extract_github_fixtures.py [--out tests/fixtures/github]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WEBHOOKS_PACKAGE = "@octokit/webhooks-examples"
WEBHOOKS_VERSION = "7.6.1"
OPENAPI_PACKAGE = "@octokit/openapi"
OPENAPI_VERSION = "23.0.2"

WEBHOOKS_INDEX = "api.github.com/index.json"
OPENAPI_DOCUMENT = "generated/api.github.com.json"

OPERATIONS: tuple[tuple[str, str], ...] = (
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("delete", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/reactions"),
    ("post", "/repos/{owner}/{repo}/labels"),
    ("get", "/repos/{owner}/{repo}/labels/{name}"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/pulls"),
    ("post", "/repos/{owner}/{repo}/pulls"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("patch", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts"),
    ("get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"),
    ("get", "/repos/{owner}/{repo}/branches/{branch}"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"),
)

DROPPED_OPERATION_KEYS = ("x-octokit",)


@dataclass(frozen=True)
class WebhookPick:
    """Which example of which event becomes which fixture file."""

    event: str
    action: str
    on_pull_request: bool = False

    @property
    def filename(self) -> str:
        suffix = ".pull_request" if self.on_pull_request else ""
        return f"{self.event}.{self.action}{suffix}.json"


WEBHOOK_PICKS: tuple[WebhookPick, ...] = (
    WebhookPick("issues", "labeled"),
    WebhookPick("issues", "opened"),
    WebhookPick("issues", "assigned"),
    WebhookPick("issue_comment", "created"),
    WebhookPick("issue_comment", "created", on_pull_request=True),
    WebhookPick("pull_request_review", "submitted"),
    WebhookPick("pull_request_review_comment", "created"),
)


# ---------------------------------------------------------------------------- npm


def npm_install(prefix: Path) -> None:
    """Install the two pinned packages into `prefix` without touching any package.json."""
    specs = [f"{WEBHOOKS_PACKAGE}@{WEBHOOKS_VERSION}", f"{OPENAPI_PACKAGE}@{OPENAPI_VERSION}"]
    command = ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(prefix)]
    subprocess.run([*command, *specs], check=True)


def package_dir(prefix: Path, package: str) -> Path:
    return prefix / "node_modules" / package


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Any, indent: int = 2) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


# ----------------------------------------------------------------------- webhooks


def examples_of(index: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    for entry in index:
        if entry["name"] == event:
            return list(entry["examples"])
    raise SystemExit(f"event {event!r} not in {WEBHOOKS_INDEX}")


def find_example(
    index: list[dict[str, Any]], pick: WebhookPick
) -> tuple[int, dict[str, Any]] | None:
    """The first example of the event with the action (and the wanted PR-ness), with its index."""
    for position, example in enumerate(examples_of(index, pick.event)):
        on_pr = bool(example.get("issue", {}).get("pull_request"))
        if example.get("action") == pick.action and on_pr == pick.on_pull_request:
            return position, example
    return None


def other_indexes_with(package: Path, pick: WebhookPick) -> list[str]:
    """The package's other indexes (ghes-*/index.json) that hold an example for `pick`."""
    others = sorted(package.glob("*/index.json"))
    return [
        str(path.relative_to(package))
        for path in others
        if path.relative_to(package).as_posix() != WEBHOOKS_INDEX
        and find_example(load_json(path), pick) is not None
    ]


def missing_line(package: Path, pick: WebhookPick) -> str:
    where = " on a pull request" if pick.on_pull_request else ""
    elsewhere = ", ".join(other_indexes_with(package, pick)) or "none"
    return (
        f"- `{pick.filename}`: NOT FOUND, no `{pick.event}` example with action "
        f"`{pick.action}`{where} in `{WEBHOOKS_INDEX}`; other indexes of the package "
        f"that have one: {elsewhere}."
    )


def extract_webhooks(package: Path, out: Path) -> list[str]:
    """Write one file per pick; return SOURCE.md lines describing what was (not) found."""
    index = load_json(package / WEBHOOKS_INDEX)
    lines = []
    for pick in WEBHOOK_PICKS:
        found = find_example(index, pick)
        if found is None:
            lines.append(missing_line(package, pick))
            continue
        position, example = found
        size = write_json(out / "webhooks" / pick.filename, example)
        lines.append(
            f"- `webhooks/{pick.filename}` ({size} bytes): `{pick.event}` "
            f"examples[{position}] (action `{pick.action}`)."
        )
    return lines


# ------------------------------------------------------------------------ openapi


def without_keys(node: Any, keys: tuple[str, ...]) -> Any:
    """A deep copy of a JSON node without the given object keys (at any depth)."""
    if isinstance(node, dict):
        return {k: without_keys(v, keys) for k, v in node.items() if k not in keys}
    if isinstance(node, list):
        return [without_keys(v, keys) for v in node]
    return node


def slim_operation(operation: dict[str, Any]) -> dict[str, Any]:
    """Drop tooling-only keys, and response examples (request body examples are kept)."""
    slim = without_keys(operation, DROPPED_OPERATION_KEYS)
    slim["responses"] = without_keys(slim.get("responses", {}), ("examples",))
    return dict(slim)


def split_ref(ref: str) -> tuple[str, str]:
    """'#/components/schemas/issue' -> ('schemas', 'issue')."""
    parts = ref.split("/")
    if len(parts) != 4 or parts[:2] != ["#", "components"]:
        raise SystemExit(f"unsupported $ref {ref!r}")
    return parts[2], parts[3]


def component(document: dict[str, Any], ref: str) -> Any:
    kind, name = split_ref(ref)
    node = document["components"][kind][name]
    return without_keys(node, ("examples",)) if kind == "responses" else node


def collect_refs(document: dict[str, Any], node: Any, seen: set[str]) -> None:
    """Add every `$ref` reachable from `node` (transitively) to `seen`."""
    if isinstance(node, list):
        for item in node:
            collect_refs(document, item, seen)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        seen.add(ref)
        collect_refs(document, component(document, ref), seen)
    for value in node.values():
        collect_refs(document, value, seen)


def subset_paths(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    paths: dict[str, dict[str, Any]] = {}
    for method, path in OPERATIONS:
        operation = document["paths"][path][method]
        paths.setdefault(path, {})[method] = slim_operation(operation)
    return paths


def subset_components(document: dict[str, Any], refs: set[str]) -> dict[str, dict[str, Any]]:
    components: dict[str, dict[str, Any]] = {}
    for ref in sorted(refs):
        kind, name = split_ref(ref)
        components.setdefault(kind, {})[name] = component(document, ref)
    return components


def extract_openapi(document: dict[str, Any]) -> dict[str, Any]:
    paths = subset_paths(document)
    refs: set[str] = set()
    collect_refs(document, paths, refs)
    info = dict(document["info"])
    info["description"] = f"Subset of {OPENAPI_PACKAGE}@{OPENAPI_VERSION} {OPENAPI_DOCUMENT}."
    return {
        "openapi": document["openapi"],
        "info": info,
        "servers": document.get("servers", []),
        "paths": paths,
        "components": subset_components(document, refs),
    }


# ---------------------------------------------------------------------- SOURCE.md


def source_markdown(webhook_lines: list[str], openapi_size: int) -> str:
    operations = "\n".join(f"- `{m.upper()} {p}`" for m, p in OPERATIONS)
    return f"""# Source of these fixtures

Generated by `scripts/extract_github_fixtures.py`; do not edit by hand.

| npm package | version | file read |
| --- | --- | --- |
| `{WEBHOOKS_PACKAGE}` | {WEBHOOKS_VERSION} | `{WEBHOOKS_INDEX}` |
| `{OPENAPI_PACKAGE}` | {OPENAPI_VERSION} | `{OPENAPI_DOCUMENT}` |

Regenerate (needs npm and the npm registry; bump the pinned versions in the script first):

```sh
python scripts/extract_github_fixtures.py
```

It runs `npm install --no-save --prefix <tmpdir> {WEBHOOKS_PACKAGE}@{WEBHOOKS_VERSION} \\
{OPENAPI_PACKAGE}@{OPENAPI_VERSION}` and writes the files below. Tests only read them.

## Webhook payloads (`webhooks/`)

Each file is the first example of that event and action in `{WEBHOOKS_INDEX}`, unchanged:

{chr(10).join(webhook_lines)}

A comment on a pull request arrives as `issue_comment` whose `issue` has a `pull_request`
object; when no such example exists above, tests that need one must build it from
`issue_comment.created.json` by adding `issue.pull_request`.

## REST API subset (`openapi-subset.json`, {openapi_size} bytes)

The operations below copied from `{OPENAPI_DOCUMENT}` (only `x-octokit` dropped), with every
`components` entry they reference, transitively (schemas, parameters, responses, headers).
Response `examples` are dropped to keep the file small; request body examples are kept.

{operations}
"""


# --------------------------------------------------------------------------- main


def extract(prefix: Path, out: Path) -> None:
    webhooks = package_dir(prefix, WEBHOOKS_PACKAGE)
    openapi = package_dir(prefix, OPENAPI_PACKAGE)
    webhook_lines = extract_webhooks(webhooks, out)
    subset = extract_openapi(load_json(openapi / OPENAPI_DOCUMENT))
    openapi_size = write_json(out / "openapi-subset.json", subset, indent=1)
    text = source_markdown(webhook_lines, openapi_size)
    (out / "SOURCE.md").write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    default_out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "github"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="octokit-") as tmp:
        npm_install(Path(tmp))
        extract(Path(tmp), args.out)
    print(f"wrote fixtures to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
