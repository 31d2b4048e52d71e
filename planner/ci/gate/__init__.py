"""Approvals people give on the forge: their answers, the marks that say what they could have
seen, and the witness that confirms them before an approved action runs."""
