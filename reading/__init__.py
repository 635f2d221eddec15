"""Bounded readers for every file a user hands the CLI or the program (the bottom layer: imports nothing of
the project)."""
