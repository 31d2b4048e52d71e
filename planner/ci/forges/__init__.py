"""Forge adapters: GitHub (github.py), GitLab (gitlab.py) and local files (local.py, which reads
issue files with issue_file.py).

Import the adapter you need directly (planner.ci.job does so lazily), so a GitHub run never loads
GitLab code and vice versa. Shared types and logic live in base.py, the HTTP client in http.py.
"""
