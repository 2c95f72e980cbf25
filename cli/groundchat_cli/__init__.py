"""The `groundchat` command and the local stack. Not shipped in the Lambda layer: it imports the
core and the functions (to serve them together locally); nothing in the core imports it."""
