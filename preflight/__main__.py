"""`python -m preflight`, the documented name of the preflight CLI, forwards to cli/preflight.py."""

import os
import sys

# The CLI loads no pydantic plugin: looking for one, pydantic's first model reads every installed package's
# entry points (about 20 ms of a 0.3 s answer). A value the user set stays.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from cli.preflight import main

if __name__ == "__main__":
    sys.exit(main())
