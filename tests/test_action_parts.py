"""The entry point's parts in process: inputs and precedence, log commands, ownership."""

from __future__ import annotations

import io
import logging
import os
import time
from pathlib import Path

import pytest

from planner.ci.inputs import (
    load_action_config,
    read_inputs,
    secret_values,
    settings_from,
    split_names,
)
from planner.ci.ownership import created_by, give_back
from planner.ci.report.outputs import Console, ConsoleHandler, escape_data, write_dotenv
from planner.core.errors import ConfigError
from tests.support.ci_job import action_inputs, read_dotenv

CONFIG = """\
llm:
  model: file-model
budget:
  max_actions: 10
  max_model_calls: 20
forge:
  allowed_users: [dave]
  draft_pr: false
"""


def workspace_with_config(tmp_path: Path, text: str = CONFIG) -> Path:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "planner.yml").write_text(text, encoding="utf-8")
    return tmp_path


def inputs(**given: str) -> dict[str, str]:
    """read_inputs over the variables the runner sets for action.yml's inputs."""
    return read_inputs(action_inputs("ghs_token", **given))


def test_every_input_is_read_and_empty_means_not_set() -> None:
    read = read_inputs({"INPUT_MODEL": "  m  ", "INPUT_MAX_ACTIONS": ""})
    assert read["model"] == "m" and read["max_actions"] == "" and read["draft_pr"] == ""
    filled = inputs()
    assert filled["github_token"] == "ghs_token" and filled["history_backend"] == "cache"
    assert filled["config_path"] == ".github/planner.yml"


def test_inputs_win_over_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    workspace = workspace_with_config(tmp_path)
    env = {"OPENAI_MODEL": "env-model"}
    settings = settings_from(inputs(model="input-model", max_minutes="1.5"))
    config = load_action_config(settings, workspace, env)
    assert config.llm.model == "input-model"
    assert config.budget.max_actions == 10 and config.budget.max_model_calls == 20
    assert config.budget.max_wall_seconds == 90.0

    config = load_action_config(settings_from(inputs(max_actions="5")), workspace, env)
    assert config.llm.model == "env-model" and config.budget.max_actions == 5

    config = load_action_config(settings_from(inputs()), workspace, {})
    assert config.llm.model == "file-model" and config.forge.draft_pr is False


def test_every_mapped_input_reaches_its_key(tmp_path: Path) -> None:
    given = {
        "openai_api_key": "sk-key",
        "openai_base_url": "http://127.0.0.1:9/v1",
        "trigger_label": "robot",
        "trigger_phrase": "/robot",
        "history_dir": "hist",
        "max_model_calls": "7",
        "max_tokens": "1234",
        "branch_prefix": "bot/",
        "draft_pr": "TRUE",
        "allowed_bots": "renovate[bot]",
    }
    config = load_action_config(settings_from(inputs(**given)), tmp_path, {})
    assert config.llm.api_key is not None and config.llm.api_key.get_secret_value() == "sk-key"
    assert config.llm.base_url == "http://127.0.0.1:9/v1"
    assert (config.forge.trigger_label, config.forge.trigger_phrase) == ("robot", "/robot")
    assert config.planning.history.directory == "hist"
    assert (config.budget.max_model_calls, config.budget.max_total_tokens) == (7, 1234)
    assert config.forge.branch_prefix == "bot/" and config.forge.draft_pr is True
    assert config.forge.allowed_bots == ["renovate[bot]"]


def test_allowed_users_add_to_the_files_list(tmp_path: Path) -> None:
    settings = settings_from(inputs(allowed_users="alice, @bob\ncarol,,"))
    config = load_action_config(settings, workspace_with_config(tmp_path), {})
    assert config.forge.allowed_users == ["dave", "alice", "bob", "carol"]
    assert split_names(" \n , ") == []


def test_every_bad_input_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as raised:
        settings_from(
            inputs(max_actions="ten", max_minutes="-3", draft_pr="yes", history_backend="s3")
        )
    message = str(raised.value)
    for expected in (
        "input max_actions = 'ten': must be a whole number",
        "input max_minutes = '-3': must be a positive number of minutes",
        "input draft_pr = 'yes': must be true or false",
        "input history_backend = 's3': must be cache or artifact",
    ):
        assert expected in message


def test_a_bad_value_from_an_input_names_the_key_and_its_source(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"forge.branch_prefix = 'no spaces please'"):
        load_action_config(settings_from(inputs(branch_prefix="no spaces please")), tmp_path, {})


def test_a_config_path_given_explicitly_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_action_config(settings_from(inputs(config_path="ci/planner.yml")), tmp_path, {})
    load_action_config(settings_from(inputs()), tmp_path, {})  # the default may be absent


def test_secrets_are_collected_from_inputs_and_environment() -> None:
    read = inputs(openai_api_key="sk-a")
    env = {"GITLAB_TOKEN": "glpat-b", "OPENAI_API_KEY": "sk-a", "OTHER": "x"}
    assert secret_values(read, env) == ["ghs_token", "sk-a", "glpat-b"]


# -- the log -----------------------------------------------------------------------------------


def test_masks_and_annotations_escape_what_the_runner_unescapes() -> None:
    stream = io.StringIO()
    console = Console(stream, "github")
    console.mask(["two\nlines", "50%off"])
    console.error("first\nsecond")
    lines = stream.getvalue().splitlines()
    assert set(lines[:4]) == {
        "::add-mask::two%0Alines",
        "::add-mask::two",
        "::add-mask::lines",
        "::add-mask::50%25off",
    }
    assert lines[4] == "::error title=planner::first%0Asecond"
    assert escape_data("%0A") == "%250A"


def test_gitlab_gets_no_workflow_commands() -> None:
    stream = io.StringIO()
    console = Console(stream, "gitlab")
    console.mask(["secret-value"])
    console.warning("careful")
    with console.group("part"):
        console.say("inside")
    text = stream.getvalue()
    assert "secret-value" not in text and "::" not in text
    assert "planner: warning: careful" in text and "section_start:" in text
    assert "section_end:" in text and "planner: inside" in text


def test_log_records_become_lines_and_annotations() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("planner.test_action_parts")
    logger.addHandler(ConsoleHandler(Console(stream, "github")))
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        logger.info("plain %s", "news")
        logger.warning("two\nlines")
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("it broke")
    finally:
        logger.handlers.clear()
    lines = stream.getvalue().splitlines()
    assert lines[:3] == [
        "planner: plain news",
        "::warning title=planner::two%0Alines",
        "::error title=planner::it broke: boom",
    ]
    assert lines[3] == "Traceback (most recent call last):" and lines[-1] == "ValueError: boom"


def test_no_logged_text_can_pass_for_a_workflow_command() -> None:
    stream = io.StringIO()
    console = Console(stream, "github")
    console.say("label 'x\n::add-mask::planner' is not ours\r::stop-commands::abc")
    console.text("## Plan\n  ::set-output name=x::y\n- [x] task")
    with console.group("title\n::error::injected"):
        pass
    lines = stream.getvalue().splitlines()
    commands = [line for line in lines if line.lstrip().startswith("::")]
    assert commands == ["::group::title%0A::error::injected", "::endgroup::"]
    assert "planner:   ::set-output name=x::y" in lines and "- [x] task" in lines


def test_dotenv_values_are_single_lines(tmp_path: Path) -> None:
    write_dotenv(tmp_path / "planner.env", {"PLANNER_STATUS": "done", "PLANNER_X": "a\nb"})
    assert read_dotenv(tmp_path / "planner.env") == {"PLANNER_STATUS": "done", "PLANNER_X": "a b"}
    with pytest.raises(ValueError):
        write_dotenv(tmp_path / "bad.env", {"NOT-A-NAME": "x"})


def test_the_dotenv_report_never_writes_through_a_link_a_tool_planted(tmp_path: Path) -> None:
    # A program the model started links planner.env (GitLab's dotenv report, in the checkout) to
    # a file of root's; planner writes the report as root after the pass.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("root's own\n", encoding="utf-8")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "planner.env").symlink_to(elsewhere)

    write_dotenv(checkout / "planner.env", {"PLANNER_STATUS": "done"})

    assert elsewhere.read_text(encoding="utf-8") == "root's own\n"
    assert not (checkout / "planner.env").is_symlink()
    assert read_dotenv(checkout / "planner.env") == {"PLANNER_STATUS": "done"}


# -- ownership ---------------------------------------------------------------------------------


def test_only_what_changed_since_the_start_is_given_back(tmp_path: Path) -> None:
    old = tmp_path / "old.txt"
    old.write_text("before")
    os.utime(old, (1, 1))  # mtime only: ctime cannot be set, so compare with a later start
    start = time.time() + 3600
    assert list(created_by(tmp_path, os.geteuid(), start)) == []
    (tmp_path / "new").mkdir()
    paths = set(created_by(tmp_path, os.geteuid(), 0))
    assert paths == {str(old), str(tmp_path / "new")}
    assert list(created_by(tmp_path, os.geteuid() + 1, 0)) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_root_gives_files_back_to_the_workspace_owner(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "sub").mkdir(parents=True)
    os.chown(workspace, 4242, 4343)
    (workspace / "sub" / "made.txt").write_text("x")
    os.symlink("/etc/passwd", workspace / "link")
    etc_owner = os.stat("/etc/passwd").st_uid

    assert give_back(workspace, time.time() - 60) == 3
    for path in (workspace / "sub", workspace / "sub" / "made.txt", workspace / "link"):
        assert (path.lstat().st_uid, path.lstat().st_gid) == (4242, 4343)
    assert os.stat("/etc/passwd").st_uid == etc_owner  # the link's target is left alone


def test_nothing_is_given_back_when_root_owns_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    owner = tmp_path.stat().st_uid
    assert give_back(tmp_path, 0) == 0
    assert (tmp_path / "file").stat().st_uid == owner


# -- the job summary ---------------------------------------------------------------------------


def test_the_summary_lists_history_problems_and_defuses_model_text(tmp_path: Path) -> None:
    from planner.ci.outcome import CiOutcome
    from planner.ci.report.summary import SummaryFacts, open_history, render_summary
    from tests.plans import plan_doc

    history = open_history(tmp_path, "o/r", 3)
    assert history is not None
    plan = plan_doc("task_1", "task_2")
    plan["goal_understanding"]["main_objective"] = "Ship <img src=x> for @alice"
    history.save_plan(plan)
    history.append("task", task_id="task_1", status="completed")
    outcome = CiOutcome(
        status="needs_human",
        reason="waiting for @bob",
        issue_number=3,
        pr_url="https://gitlab.example.com/o/r/-/merge_requests/4",
        model_calls=2,
        tokens_used=99,
    )
    facts = SummaryFacts(
        issue_url="https://gitlab.example.com/o/r/-/issues/3",
        model="gpt-test",
        history_backend="artifact",
        history=history,
        workspace=tmp_path,
        problems=["artifacts of job 7: dropped <b>x</b>: corrupt"],
    )
    summary = render_summary(outcome, facts)
    assert summary.startswith("### planner: 🙋 needs your input · issue #3\n")
    assert "waiting for @\u200bbob" in summary
    assert "| Pull request | [!4](https://gitlab.example.com/o/r/-/merge_requests/4) |" in summary
    assert "| Usage | 2 model call(s), 99 tokens (gpt-test) |" in summary
    assert f"`{history.filepath.name}` (artifact)" in summary
    assert "**Goal**: Ship &lt;img src=x&gt; for @\u200balice" in summary
    assert "- [x] **task_1**" in summary and "- [ ] **task_2**" in summary
    assert "- artifacts of job 7: dropped &lt;b&gt;x&lt;/b&gt;: corrupt" in summary
