"""The built-in tools on the checkout's files: reading, searching and editing them, confined to the
workspace, with what a change would destroy told first."""
