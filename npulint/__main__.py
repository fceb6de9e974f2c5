import sys

from npulint.cli import console_main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess (tests/test_cli.py)
    sys.exit(console_main())
