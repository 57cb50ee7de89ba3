"""Replay of recorded provider traffic for adapter tests (see replay.py)."""
