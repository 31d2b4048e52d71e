#!/usr/bin/env python3
"""Container entry point; all logic lives in the planner package."""

import sys

from planner.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or None))
