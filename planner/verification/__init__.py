"""Phase package: the repository's tests as part of the pass (docs/verification.md)."""
