"""llm.model that no source sets, for an endpoint other than OpenAI's: the model it serves.

A llama.cpp or vLLM server ignores or refuses OpenAI's default model name; a maintainer who set
only the endpoint gets the model the endpoint lists, and the profile that model's size asks for.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from planner.config import load_config
from planner.core.errors import ConfigError
from planner.model.llm import served_model
from planner.testing.scripted_server import ScriptedModelServer
from tests.support.model_listing import Listing


@pytest.fixture
def several() -> Iterator[Listing]:
    with Listing([f"model-{n}" for n in range(12)]) as listing:
        yield listing


def endpoint_only(base_url: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "local"}


def test_an_endpoint_set_alone_gives_its_model_and_that_models_profile() -> None:
    with ScriptedModelServer(model="qwen2.5-coder:7b") as server:
        config = load_config(None, env=endpoint_only(server.base_url), served_model=served_model)
    assert config.llm.model == "qwen2.5-coder:7b"
    assert config.profile == "small_model" and config.llm.temperature == 0


def test_an_endpoint_serving_several_models_asks_for_one_by_name(several: Listing) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(None, env=endpoint_only(several.base_url), served_model=served_model)
    message = str(raised.value)
    assert "llm.model is not set" in message and "serves 12 models" in message
    assert "model-0, model-1" in message and "and 2 more" in message
    assert "OPENAI_MODEL" in message


def test_a_proxy_listing_the_default_model_among_others_keeps_it() -> None:
    """A LiteLLM proxy that routes gpt-4.1 among other models worked before planner asked."""
    with Listing(["claude-sonnet-4", "gpt-4.1", "qwen2.5-coder:7b"]) as proxy:
        config = load_config(None, env=endpoint_only(proxy.base_url), served_model=served_model)
    assert config.llm.model == "gpt-4.1" and config.profile == "standard"


def test_a_model_named_anywhere_is_not_asked_for(several: Listing) -> None:
    """Named with its size, nothing is asked; named without, only its size is (below)."""
    env = {**endpoint_only(several.base_url), "OPENAI_MODEL": "model-3:7b"}
    assert load_config(None, env=env, served_model=served_model).llm.model == "model-3:7b"
    overrides = {"llm.model": "model-4-70B"}
    config = load_config(
        None, env=endpoint_only(several.base_url), overrides=overrides, served_model=served_model
    )
    assert config.llm.model == "model-4-70B"
    assert several.requests == []
    unsized = {**endpoint_only(several.base_url), "OPENAI_MODEL": "model-50"}
    assert load_config(None, env=unsized, served_model=served_model).llm.model == "model-50"
    assert several.requests == ["/v1/models"]  # model-50 is not listed: no Ollama tags asked


def test_loading_a_config_asks_nothing_unless_a_pass_is_about_to_start(several: Listing) -> None:
    config = load_config(None, env=endpoint_only(several.base_url))
    assert config.llm.model == "gpt-4.1" and several.requests == []


def test_an_endpoint_that_does_not_answer_keeps_the_default_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    with caplog.at_level(logging.WARNING):
        config = load_config(None, env=endpoint_only(base_url), served_model=served_model)
    assert config.llm.model == "gpt-4.1"
    assert f"{base_url} did not list its models" in caplog.text


# -- a name without a size: the endpoint's own figure picks the profile -------------------------


def test_a_llama_cpp_model_named_after_its_file_gets_the_profile_of_its_parameter_count() -> None:
    """llama-server lists a GGUF started without --alias under its file name, which gives no
    size; its listing's meta.n_params does."""
    gguf = "Phi-4-mini-instruct-Q4_K_M.gguf"
    with Listing([gguf], n_params={gguf: 3_836_021_760}) as server:
        config = load_config(None, env=endpoint_only(server.base_url), served_model=served_model)
    assert config.llm.model == gguf
    assert config.profile == "small_model" and config.llm.temperature == 0
    assert server.requests == ["/v1/models"]


def test_a_large_model_without_a_size_in_its_name_stays_standard() -> None:
    with Listing(["big"], n_params={"big": 70_553_706_496}) as server:
        env = {**endpoint_only(server.base_url), "OPENAI_MODEL": "big"}
        config = load_config(None, env=env, served_model=served_model)
    assert config.llm.model == "big" and config.profile == "standard"


def test_an_ollama_model_named_without_its_tag_gets_the_profile_of_its_parameter_size() -> None:
    """Ollama lists `llama3.2:latest` without a size; its /api/tags says 3.2B."""
    ollama = {"llama3.2:latest": "3.2B", "llama3.3:latest": "70.6B"}
    with Listing(list(ollama), ollama=ollama) as server:
        small = {**endpoint_only(server.base_url), "OPENAI_MODEL": "llama3.2"}
        large = {**endpoint_only(server.base_url), "OPENAI_MODEL": "llama3.3:latest"}
        assert load_config(None, env=small, served_model=served_model).profile == "small_model"
        assert load_config(None, env=large, served_model=served_model).profile == "standard"
    assert server.requests == ["/v1/models", "/api/tags"] * 2


def test_nothing_is_asked_when_the_name_gives_the_size_or_the_profile_is_set() -> None:
    with Listing(["phi4-mini"], n_params={"phi4-mini": 3_836_021_760}) as server:
        sized = {**endpoint_only(server.base_url), "OPENAI_MODEL": "qwen2.5-coder:32b"}
        assert load_config(None, env=sized, served_model=served_model).profile == "standard"
        chosen = {**endpoint_only(server.base_url), "OPENAI_MODEL": "phi4-mini"}
        set_profile = {"profile": "standard"}
        config = load_config(None, env=chosen, overrides=set_profile, served_model=served_model)
        assert config.profile == "standard"
    assert server.requests == []


def test_an_endpoint_that_gives_no_size_leaves_the_profile_standard() -> None:
    """vLLM lists its model without a size and has no /api/tags: one request each, standard."""
    with Listing(["mistralai/Mistral-Small-Instruct"]) as server:
        env = endpoint_only(server.base_url)
        config = load_config(None, env=env, served_model=served_model)
    assert config.llm.model == "mistralai/Mistral-Small-Instruct"
    assert config.profile == "standard"
    assert server.requests == ["/v1/models", "/api/tags"]
