"""Test doubles that are models like any other (the scripted model) and the strict transcript
checkers of the providers' ordering rules. Used by tests and benchmarks; never shipped."""
