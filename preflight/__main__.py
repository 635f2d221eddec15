"""`python -m preflight`, the documented name of the preflight CLI, forwards to cli/preflight.py."""

import sys

from cli.preflight import main

if __name__ == "__main__":
    sys.exit(main())
