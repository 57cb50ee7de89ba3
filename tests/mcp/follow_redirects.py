"""A stand-in browser for tests: `python follow_redirects.py URL` fetches URL, following redirects."""

from __future__ import annotations

import sys

import httpx2

if __name__ == "__main__":
    with httpx2.Client() as http:
        http.get(sys.argv[1], follow_redirects=True, timeout=30)
