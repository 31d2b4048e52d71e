"""The messages of a pass's own layers: the configuration, the pass loop (planner/engine/), the
model endpoint (planner/model/), the history (planner/memory/), how a pass ends
(planner/outcome/) and text made safe (planner/text/)."""

from __future__ import annotations

from planner.core.catalogue.entry import Entry

PASSES: tuple[Entry, ...] = (
    Entry(
        "PLN094",
        "task {} re-opened: its commit is not on the branch",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN095",
        "llm.model is not set and {} serves {} models ({}): name one in llm.model, the "
        "environment variable OPENAI_MODEL or the action's input model",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN096",
        "config file {} does not exist",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN097",
        "config file {} is not valid YAML: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN098",
        "config file {} must hold a mapping, not {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN099",
        "budget: {} actions per pass reached",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN100",
        "budget: {} model calls per pass reached",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN101",
        "budget: {} tokens per pass reached",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN102",
        "budget: {} seconds per pass reached",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN103",
        "progress reporter failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN104",
        "phase {} failed as the pass ended",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN105",
        "the plan was already completed",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN106",
        "cannot open history {}: {}",
        "historyerror--the-planning-history-exit-code-1",
    ),
    Entry(
        "PLN107",
        "cannot append to history {}: {}",
        "historyerror--the-planning-history-exit-code-1",
    ),
    Entry(
        "PLN108",
        "{}{}{}: skipped {} ({} bytes)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN109",
        "model text still rendered a link after it was made inert; escaping it all",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN110",
        "the model's {} reply was unusable twice: {}",
        "modelbehaviourerror--the-models-reply-exit-code-1",
    ),
    Entry(
        "PLN111",
        "model {} reply unusable, asking again: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN112",
        "llm.tool_calling auto: using json tool calls for this pass: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN113",
        "model {} tool call unusable, asking again: {} (reply: {})",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN114",
        "the model refused the {} request: {}",
        "modelbehaviourerror--the-models-reply-exit-code-1",
    ),
    Entry(
        "PLN115",
        "the reply was stopped before the JSON ended: it kept repeating itself; answer with a "
        "shorter document, each item once ({})",
        "modelbehaviourerror--the-models-reply-exit-code-1",
    ),
    Entry(
        "PLN116",
        "the reply was cut off at the output limit ({}) before the JSON ended; answer with a "
        "shorter document ({})",
        "modelbehaviourerror--the-models-reply-exit-code-1",
    ),
    Entry(
        "PLN117",
        "the model returned no choices for {}",
        "modelbehaviourerror--the-models-reply-exit-code-1",
    ),
    Entry(
        "PLN118",
        "model {} request shrunk from about {} to {} tokens to fit the {}-token context window",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN119",
        "model {} request overflowed the context window ({}): fitting it to {} tokens",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN120",
        "model {} reply stopped: it was repeating itself",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN121",
        "{} did not list its models: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN122",
        "no model API key: set the environment variable OPENAI_API_KEY (the action's input "
        "openai_api_key), or set OPENAI_BASE_URL (openai_base_url) to an endpoint that needs "
        "none",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN123",
        "the {} prompt is {} bytes, over llm.max_prompt_bytes ({}); it was not sent",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN124",
        "model API answered HTTP {}: {}{}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN125",
        "model API unreachable: {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN126",
        "reflection failed: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN127",
        "the model did not consider the work done",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN128",
        "all tasks finished",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN129",
        "clarification needed: {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN212",
        "budget: the wall-clock deadline of the run was reached",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN213",
        "interrupted",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN226",
        "budget: the candidate fixes spent the pass's time ({}); none passed the issue's test",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN214",
        "done",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN221",
        "a post held {} link(s) or image(s) to other hosts; it was made inert",
        "warnings-in-the-log",
    ),
    # the same two warnings where the text they quote was cut (model.replies.short)
    Entry(
        "PLN224",
        "model {} tool call unusable, asking again: {} (reply: {}…)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN225",
        "model {} request overflowed the context window ({}…): fitting it to {} tokens",
        "warnings-in-the-log",
    ),
)
