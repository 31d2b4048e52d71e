"""Phase package: interactive planning sessions (model, transitions, replies, storage, terminal
flow); InteractivePhase plans from an approved session."""
