"""The issue branch in the working tree: prepare it, commit under the path rules, push it; and
the lease ref beside it (one run per issue at a time)."""
