"""The approval gate (plan-tool.md): writes, deletions and commands become ActionSpecs that are
validated, previewed, risk-scored and approved before they run. PlanTool is the single source of
truth for their state; the pass, the forge layer and the CLI only call it.

models.py      Plan, PlanState, ActionSpecExt and the API's report types
validation.py  path normalisation, refusals and the risk table
preview.py     preflight and unified-diff summaries
store.py       plans/<id>/plan.json, approval.json, preview/*.diff, index.json, events.ndjson
tool.py        PlanTool: propose, set_action_specs, preview, approve, execute, …
gate.py        the pass's gate: tool calls in, specs out, pauses where policy says
commands.py    `/planner approve …` and `/planner reject …`
"""
