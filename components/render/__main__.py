"""`python -m components.render`, the documented name of the offline render, forwards to cli/render.py."""

import sys

from cli.render import main

if __name__ == "__main__":
    sys.exit(main())
