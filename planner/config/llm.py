"""llm — the OpenAI-compatible chat endpoint and the prices of its models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from planner.config.base import Section

DEFAULT_MODEL = "gpt-4.1"


class ModelPrice(Section):
    """llm.prices.<model> — what one model costs."""

    prompt_per_million: float = Field(ge=0)
    """USD per million prompt tokens."""
    completion_per_million: float = Field(ge=0)
    """USD per million completion tokens."""


class LLMConfig(Section):
    """llm — the OpenAI-compatible chat endpoint (OpenAI, Azure, Ollama, vLLM, LiteLLM, ...)."""

    model: str = DEFAULT_MODEL
    """Model name sent with every request. Not set anywhere, with a base_url other than
    OpenAI's: the model that endpoint lists at GET /models when it lists one (llama.cpp, vLLM,
    an Ollama with one model pulled); when it lists several others than this default, the run
    stops and names them."""
    base_url: str | None = None
    """API base URL, e.g. http://localhost:11434/v1 for Ollama; None means OpenAI."""
    api_key: SecretStr | None = None
    """API key; normally supplied through OPENAI_API_KEY rather than a file."""
    structured_output: Literal["json_schema", "json_mode"] = "json_schema"
    """json_schema sends response_format json_schema; json_mode asks for JSON in plain text."""
    timeout_seconds: float = Field(default=180.0, gt=0)
    """Timeout of one HTTP request to the model."""
    max_retries: int = Field(default=4, ge=0)
    """Retries on 429, 5xx and connection errors."""
    max_retry_wait_seconds: float = Field(default=60.0, ge=0)
    """Upper bound for one wait between retries (also caps Retry-After)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; None leaves the provider's default."""
    max_prompt_bytes: int = Field(default=1_500_000, ge=10_000)
    """A request whose messages (as JSON) are larger than this is not sent: the call fails with
    a clear message instead of spending the pass's budget on one oversized prompt."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Upper bound on the tokens of one reply (sent as max_tokens); None leaves the endpoint's
    default. A local server's default may be "until the context is full": a small model that
    starts repeating itself then runs into the request timeout, and every retry again."""
    context_tokens: int | None = Field(default=None, ge=512)
    """The model's context window in tokens. None: what the endpoint says (llama.cpp's
    /props n_ctx, Ollama's num_ctx) or, for a known hosted model, its published limit. Every
    request is fitted to it with room for the reply (llm.max_output_tokens, else a quarter of
    the window up to 4096): long tool results of earlier turns are cut to a window around what
    was asked, older turns summarised; a server's context-overflow error shrinks the request
    and sends it again."""
    stop_repeating: bool = False
    """Stream each reply and stop it once it keeps repeating itself (the same passage over and
    over, as small models do at temperature 0, until the output limit): what came before is the
    reply, treated as cut off at the output limit. Needs an endpoint that streams with
    `stream_options.include_usage` (OpenAI, llama.cpp, Ollama, vLLM). A stopped reply ends
    before the endpoint's count: it reports the tokens it streamed and its prompt estimated at
    4 characters per token."""
    tool_calling: Literal["native", "json", "auto"] = "auto"
    """How tool calls travel: native `tools`/`tool_calls`; json (the model answers a JSON
    document naming the tool and its arguments, validated and re-asked once); auto (native,
    switching to json for the rest of the pass when the endpoint or model gives no tool calls).
    In every mode a reply that writes a well-formed call as text runs as that call."""
    edit_format: Literal["whole_file", "edit_file"] = "whole_file"
    """How the model is asked to change the files its prompt shows whole: whole_file (reply
    with the file's path and its complete new content in a code block; small models get this
    right far more often than search/replace edits; that turn sends no tools, later turns do)
    or edit_file (search/replace edits with the edit_file tool, every turn offers the tools;
    cheaper in output tokens on large files). In both, a reply holding such a block for a file
    shown whole writes that file through write_file."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """USD per million tokens by model name: the cost shown in the tracking comment, the job
    summary and `planner eval`; for a model not listed only tokens are shown."""
