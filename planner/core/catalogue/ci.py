"""The messages of the CI layer (planner/ci/): the job and its events, the forges and their
APIs, git, the issue's lease, the tracking comment, replies on the issue."""

from __future__ import annotations

from planner.core.catalogue.entry import Entry

CI: tuple[Entry, ...] = (
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
        "PLN219",
        "{} …(cut to fit the comment size limit)",
        "replies-on-the-issue",
    ),
)
