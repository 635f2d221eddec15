"""The command lines, above every library they print: `python -m preflight` (cli/preflight.py) and
`python -m components.render` (cli/render.py), whose documented module names stay as thin forwarders."""
