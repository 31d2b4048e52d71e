"""Task refinement: a quality judge decides accept, replan or reject (task-refinement.md).

judgement.py   QualityJudgement (score, is_acceptable, issues, suggestions) and its subjects
decision.py    make_refinement_decision: the seed's priorities 1-6, stagnation figures
structure.py   structure validation of a replanned plan, individual (task by task) fallback
judge.py       QualityJudge: the judge calls, prompts in prompts/refinement_judge_*.md.j2
replan.py      feedback-based replanning (plan) and follow-up tasks (finished work)
state.py       where refinement stands, derived from history (rounds and steps)
recorder.py    the history entries quality_judgement, refinement_decision, refinement_replan
refiner.py     Refiner: after_plan() and before_completion()
phase.py       RefinementPhase: the Refiner's hooks in the pass loop
port.py        WorkDiff: the diff callable the runner supplies
"""
