"""GitHub integration of the Action: inputs, event, workflow commands, the sticky comment, file ownership."""
