"""The share function: shared conversations, readable by anyone, written by no one."""
