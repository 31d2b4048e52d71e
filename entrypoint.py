#!/usr/bin/env python3
"""Container entry point of the GitHub Action and the GitLab component; see planner/ci/action.py."""

import sys

from planner.ci.action import main

if __name__ == "__main__":
    sys.exit(main())
