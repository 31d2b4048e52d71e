"""Every message planner shows a user, with its code: what it logs at warning level or above,
raises as an error, stops a pass with, posts as a reply, exits with or prints to standard error.

Each entry is the message exactly as the code writes it, with {} for each part filled in at run
time (an f-string's placeholder, a `%s` of a log call). tests/test_catalogue.py reads the source
with `ast` and fails for a message that is not here, word for word, and for an entry no code
makes any more: a new or changed message gets its entry (the next free code; a code is never
reused) and its fix in docs/troubleshooting.md, whose section `fix` names. docs/messages.md lists
them all (`python3 scripts/dev.py docs`).
"""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    code: str
    """PLN and three digits; never reused for another message."""
    text: str
    """The message as the code writes it, {} for each part filled in at run time."""
    fix: str
    """The anchor of the section of docs/troubleshooting.md that says what to do."""


CATALOGUE: tuple[Entry, ...] = (
    Entry(
        "PLN001",
        "files changed outside any judged call ({}) need a person's approval, but could not be "
        "rolled back: {}. Nothing of this run was committed or pushed after it.",
        "effectnotundone--a-commands-effect-that-could-not-be-rolled-back-exit-code-1",
    ),
    Entry(
        "PLN002",
        "{}: its effect needs a person's approval ({}), but it could not be rolled back: {}. "
        "Nothing of this run was committed or pushed after it.",
        "effectnotundone--a-commands-effect-that-could-not-be-rolled-back-exit-code-1",
    ),
    Entry(
        "PLN003",
        "plan {}: {} is unreadable ({}); it is left as it is",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN004",
        "an approval_plan history entry is malformed; it is skipped",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN005",
        "planner failed unexpectedly: {}: {}",
        "an-unexpected-failure-exit-code-1",
    ),
    Entry(
        "PLN006",
        "could not mark {} as a safe git directory: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN007",
        "git {} failed while checking the commit: {}",
        "policyerror--what-may-be-committed-exit-code-1",
    ),
    Entry(
        "PLN008",
        "could not publish the work of {}: {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN009",
        "the issue's lease could not be used: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN010",
        "could not free the issue's lease (it expires by itself): {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN011",
        "the {} forge has no review threads",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN012",
        "the {} forge has no scheduled sweep",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN013",
        "the {} forge cannot start CI runs",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN014",
        "the tracking comment {} was deleted; posting a new one",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN015",
        "refusing to open a pull request from {} onto itself",
        "an-unexpected-failure-exit-code-1",
    ),
    Entry(
        "PLN016",
        "GITHUB_REPOSITORY must be set to owner/name",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN017",
        "GITHUB_TOKEN is not set: pass the workflow's token (secrets.GITHUB_TOKEN) or a PAT",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN018",
        "draft pull requests are not available here; opening a regular one",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN019",
        "GitHub GraphQL API {} failed: {}. {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN020",
        "GITHUB_WORKFLOW_REF is not set: cannot tell which workflow to run",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN021",
        "GITLAB_TOKEN is not set: add a project access token with `api` scope as a masked CI/CD "
        "variable (CI_JOB_TOKEN cannot post notes or open merge requests)",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN022",
        "GitLab CI variables missing: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN023",
        "GET /user answered {}: planner cannot recognise its own notes and will post a new "
        "tracking note",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN024",
        "{} {}: {} (attempt {})",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN025",
        "{} failed ({}): {}. {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN026",
        "issue file {} does not exist",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN027",
        "issue file {} is not a valid issue: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN028",
        "issue file {} cannot be parsed: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN029",
        "issue file {} must hold a mapping with title and body",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN030",
        "a comment must be text or a mapping, not {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN031",
        "no issue {}: create {} ('# Title' on the first line, then the description)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN032",
        "comment {} is missing or unreadable",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN033",
        "the issue branch may not be the default branch {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN034",
        "refusing to push to the default branch {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN035",
        "refusing to push: HEAD is {}, not on the issue branch {} (a program the pass started "
        "moved it)",
        "outgoingrefused--a-push-planner-will-not-make-exit-code-1",
    ),
    Entry(
        "PLN036",
        "refusing to push: {} commit(s) on {} were not made by planner ({}); a program the pass "
        "started may have committed them",
        "outgoingrefused--a-push-planner-will-not-make-exit-code-1",
    ),
    Entry(
        "PLN037",
        "refusing to push changes that break the commit rules: {}",
        "outgoingrefused--a-push-planner-will-not-make-exit-code-1",
    ),
    Entry(
        "PLN038",
        "the working tree has uncommitted changes to tracked files; commit or stash them first: {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN039",
        "{} does not exist in {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN040",
        "prepare() must run before committing or pushing",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN041",
        "git {} could not run: {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN042",
        "git {} failed (exit {}): {} {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN043",
        "{} kept moving during {} push attempts",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN044",
        "rebasing onto the remote branch conflicted: {}{}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN045",
        "invalid action inputs: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN046",
        "Nothing to cancel: no interactive planning session waits on this issue, so nothing was "
        "changed. To stop planner's work on the issue, use `/planner stop`.",
        "replies-on-the-issue",
    ),
    Entry(
        "PLN047",
        "Nothing was resumed: planner is {}. Answer in {}, or `/planner cancel` the session.",
        "replies-on-the-issue",
    ),
    Entry(
        "PLN048",
        "`cancel` did not count: {}",
        "replies-on-the-issue",
    ),
    Entry(
        "PLN049",
        "the planning session failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN050",
        "a local run needs an issue number (PLANNER_ISSUE)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN051",
        "unknown platform {} (github, gitlab or local)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN052",
        "Stop requested: the run working on this issue stops after its current step, saves its "
        "work and says so in the tracking comment. Should that run have died, the issue stays "
        "stopped all the same: no event from before this request starts work on it.",
        "replies-on-the-issue",
    ),
    Entry(
        "PLN053",
        "the run failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN054",
        "could not answer the review threads",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN055",
        "could not write the final status to the issue",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN056",
        "could not read the history for the usage footer",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN057",
        "{} and this run was {} while it waited for it.",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN058",
        "{} (its lease lasts until {} unless it renews it); this run waited as long as it "
        "could. Comment again to continue.",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN059",
        "the lease of run {} had expired (that run died): taken over",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN060",
        "another run took this run's lease over: stopping",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN061",
        "could not renew the issue's lease: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN062",
        "could not free the lease {}: another run took it over",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN063",
        "the lease {} changed meanwhile: look again",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN064",
        "{} is not a dotenv variable name",
        "an-unexpected-failure-exit-code-1",
    ),
    Entry(
        "PLN065",
        "could not give {} back to uid {}: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN066",
        "could not reply in review thread {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN067",
        "could not resolve review thread {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN068",
        "{} received: ending the pass and saving the work",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN069",
        "planner's tracking comment is missing",
        "an-unexpected-failure-exit-code-1",
    ),
    Entry(
        "PLN070",
        "could not start a run on {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN071",
        "unreadable proceed-after time {}",
        "an-unexpected-failure-exit-code-1",
    ),
    Entry(
        "PLN072",
        "the event payload has no {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN073",
        "the event payload's {} is not an object",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN074",
        "{} must be an issue number, got {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN075",
        "{} must be a positive issue number, got {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN076",
        "the GitHub event payload is not a JSON object",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN077",
        "workflow_dispatch needs an 'issue' input (the issue number)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN078",
        "GITHUB_EVENT_NAME is not set: is this running in GitHub Actions?",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN079",
        "{} does not name a readable file ({})",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN080",
        "the event payload in {} is not valid JSON: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN081",
        "the event payload in {} is not a JSON object",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN082",
        "the GitLab webhook payload is not a JSON object",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN083",
        "GITLAB_USER_LOGIN is not set: cannot tell who started the pipeline",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN084",
        "eval: {}: {} (sha256 verified)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN085",
        "eval: {}: {} ({}{}, {} calls, {} prompt tokens, {}s)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN086",
        "eval: resolved {}/{}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN087",
        "run {} renewed the lease of issue {} lately (until {}), so it may still be working; "
        "wait for that time, or give --force if you know it is gone",
        "freeing-a-lease-by-hand",
    ),
    Entry(
        "PLN088",
        "{} has no git remote {}: {}",
        "freeing-a-lease-by-hand",
    ),
    Entry(
        "PLN089",
        "planner: error: {}",
        "where-to-look-first",
    ),
    Entry(
        "PLN090",
        "--repo {} is not a directory",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN091",
        "warning: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN092",
        'give an instruction (planner plan "what to build") or --resume',
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN093",
        "plan-tool {} needs a plan id (see plan-tool list)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
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
        "PLN130",
        "{} is not in the evaluation cache ({}); fetch it first: planner eval --suite real "
        "--fetch-only (--suite holdout for the held-out tasks)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN131",
        "the downloaded {} has sha256 {}, but the task pins {}: not used",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN132",
        "downloading {} gave {}, not one archive",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN133",
        "pip download {} failed: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN134",
        "{} cannot be unpacked: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN135",
        "{} holds {}, outside its folder",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN136",
        "the recorded edit names {}, outside the package",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN137",
        "the recorded edit of {} cannot be applied: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN138",
        "the recorded edit of {} does not apply: its old text occurs {} times (it must occur once)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN139",
        "bad evaluation task {}: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN140",
        "no such task(s): {}; the suite has: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN141",
        "repository index cache {} unreadable ({}); indexing again",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN142",
        "repository index cache not written ({})",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN143",
        "interactive planning session {} is in {}: no plan before it is approved",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN144",
        "saving {} failed (attempt {}{}): {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN145",
        "could not save planning session {} to {} after {} retries: {}",
        "sessionsaveerror--interactive-planning-exit-code-1",
    ),
    Entry(
        "PLN146",
        "no planning session {} in {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN147",
        "skipped {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN148",
        "{} is not a planning session id (planning-<uuid>)",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN149",
        "{} is not a valid planning session: {}",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN150",
        "the issue's last planning_session entry is unreadable; ignored",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN151",
        "quality judge gave no usable reply: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN152",
        "the quality judge rejected the {} ({} after {} of {} refinement attempts)",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN153",
        "a quality_judgement history entry is malformed; the subject is judged again",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN154",
        "waiting for answers to the questions asked at {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN155",
        "replanning question at {} not asked: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN156",
        "replan decision at {} ignored: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN157",
        "replan at {} {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN158",
        "clarification needed at {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN159",
        "replan decision unusable ({}): {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN160",
        "replan decision is not JSON; continuing without a replan: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN161",
        "replan decision at {} unparseable; continuing without a replan",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN162",
        "history_backend = {}: must be {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN163",
        "no history: nothing readable in the planner-history-{} artifacts",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN164",
        "ignored {} {} artifact(s) uploaded by a fork's workflow",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN165",
        "artifact {} does not match its recorded digest (corrupt)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN166",
        "artifact {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN167",
        "GitHub API GET {} did not answer JSON",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN168",
        "GitHub API {} {} answered {}: {}{}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN169",
        "{} API GET {} failed: {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN170",
        "artifact storage {} could not be reached: {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN171",
        "artifact storage {} answered {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN172",
        "the artifact is larger than {} bytes; cut short",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN173",
        "the download from {} broke off after {}{} bytes{}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN174",
        "the history directory {} is outside CI_PROJECT_DIR, so the job's artifacts cannot "
        "carry it",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN175",
        "GitLab API GET {} did not answer JSON",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN176",
        "artifacts of job {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN177",
        "GitLab API {} {} answered {}: {}{}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN178",
        "payload {} does not hold the text it names; it is not used",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN179",
        "could not delete {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN180",
        "could not rewrite {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN181",
        "drop_privileges.py: the user did not change",
        "the-tools-user",
    ),
    Entry(
        "PLN182",
        "drop_privileges.py: {}: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN183",
        "usage: drop_privileges.py UID GID [--reach WORKSPACE] -- PROGRAM [ARGS...]",
        "the-tools-user",
    ),
    Entry(
        "PLN184",
        "drop_privileges.py: every directory above {} is open already",
        "the-tools-user",
    ),
    Entry(
        "PLN185",
        "drop_privileges.py: {} failed: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN186",
        "{} holds more than {} entries: left open to the tools' user, who can write {}, which "
        "planner's own git reads: give {} back to root (chown root {})",
        "the-tools-user",
    ),
    Entry(
        "PLN187",
        "could not close {} to the tools' user: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN188",
        "tools run as uid {} in {}, but a parent directory of it is closed to that user (no "
        "o+x) and it could not be mounted back in reach ({}): tools start inside it, yet "
        "programs that look it up by its full path (git, python, pytest) fail with 'Permission "
        "denied'. Make every parent directory searchable (chmod o+x), check out elsewhere, or "
        "give planner CAP_SYS_ADMIN. tools.sandbox_user: off runs tools as root, where they can "
        "read the CI job's environment.",
        "the-tools-user",
    ),
    Entry(
        "PLN189",
        "processes of uid {} that the tools started still run after the tools were closed: {}; "
        "a change they make before the commit is not judged",
        "the-tools-user",
    ),
    Entry(
        "PLN190",
        "processes of uid {} did not stop: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN191",
        "{} was replaced while tools ran; it is left as it is",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN192",
        "MCP tool {} of {} clashes after renaming; skipped",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN193",
        "MCP server {} {}; its tools are left out",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN194",
        "MCP servers did not shut down within 30s; cancelling them",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN195",
        "MCP server configuration: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN196",
        "tools.mcp_config_file {} cannot be read: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN197",
        "tools.mcp_config_file {} is not valid JSON: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN198",
        "tools.mcp_config_file {} must hold an object with 'mcpServers'",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN199",
        "tools.mcp_config_file {}: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN200",
        "tool {} is offered twice; the first one is kept",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN201",
        "tool {} crashed",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN202",
        "closing a tool provider failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN203",
        "tool cleanup failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN204",
        "verification.enabled is on, but: {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN205",
        "the fix is unproven: no test of the issue passed (planner's was dropped: {})",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN206",
        "A person's commits on `{}` conflict with planner's work, so planner pushed its "
        "commits to `{}` instead (nothing was overwritten). Merge them by hand, then "
        "comment `{}` to continue.",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN207",
        "GitHub GraphQL API {} failed: {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN208",
        "{} failed ({}): {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN209",
        "git {} failed (exit {}): {}",
        "giterror-and-leasebusy--the-issues-branch-exit-code-1",
    ),
    Entry(
        "PLN210",
        "Cancelled the approved planning session {}: later passes plan from the issue as "
        "written, not from its design. The work already on the branch stays; to stop "
        "planner's work on the issue, use `{} stop`.",
        "replies-on-the-issue",
    ),
    Entry(
        "PLN211",
        "{} …(cut)",
        "replies-on-the-issue",
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
        "PLN214",
        "done",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN215",
        "replanning question at {} not asked: the issue already says what the named code should do",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN216",
        "replanning question at {} not asked: a tool call failed: correcting the call is "
        "the model's work, not a question",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN217",
        "replanning question at {} not asked: the issue already says what the questions ask",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN218",
        "MCP server {} {}; its tools are left out --- its stderr (last {} bytes) --- {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN219",
        "{} …(cut to fit the comment size limit)",
        "replies-on-the-issue",
    ),
    Entry(
        "PLN220",
        "no such suite: {} is neither a suite's name ({}) nor a folder",
        "userinputerror--an-issue-event-or-argument-exit-code-2",
    ),
    Entry(
        "PLN221",
        "a post held {} link(s) or image(s) to other hosts; it was made inert",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN222",
        "the fix is unproven: only documentation changed, but the issue asks for behaviour ({}) "
        "and {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
    Entry(
        "PLN223",
        "the change removes lines the issue did not ask to change from {}",
        "why-a-pass-ended--the-tracking-comments-why",
    ),
)
"""Every message by code."""
