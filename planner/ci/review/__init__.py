"""A review of planner's own pull request drives the next pass (docs/github.md, "Reviews of
planner's pull request").

    event ─ triggers: a review or a line comment with the phrase (GitHub), a diff note with the
            phrase (GitLab); review.act_on_changes_requested: every "Request changes" review
    the pass's set-up (PassSetup.set_up: its history open and kept out of git, no tool started
            yet) ─ start.start_review: the open threads whose comments come from people with
            write access; a ```suggestion block is applied as
            written and committed (that person's approval of exactly that change); the others
            become tasks of a plan revision ("Revised #N: review by @reviewer"), each thread
            recorded in the history
    each task ─ phase.ReviewPhase: the task's prompt carries its thread as untrusted data
    after the pass ─ answers.answer_threads: one reply per thread (what changed and in which
            commit, or why nothing did); a thread whose change is committed with the tests
            passing is resolved, nothing else

threads.py decides which threads are open work; anchors.py finds the commented lines in the
current file and parses suggestions (pure functions).
"""
