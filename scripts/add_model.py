"""Add a model to the catalog: its Hub facts (catalog/data/hub/), or an entry of catalog/models.py MODELS.

Usage: python scripts/add_model.py REPO_ID --hub [--revision REV] --source TEXT
       python scripts/add_model.py REPO_ID CONFIG_JSON --source TEXT [--parameters N]

With --hub the repository is read as the preflight reads a model outside the catalog (preflight/hub.py: the
Hub, or the Hub cache a run with the network filled) and its facts (config.json, every tensor's dtype, shape
and bytes, the gated flag, the commit) are kept as catalog/data/hub/<owner>--<name>.json beside `source`: the
same file as the cache, so the catalog holds the Hub's facts, not a copy retyped.

The config.json is read as the preflight reads `model.config_json` (preflight/model_source.py), so the entry
holds exactly what a stack pointing at the file would be sized with. `--source` is the comment beside the
entry (docs/extending.md: where the config.json and the parameter count come from). An id the catalog
already has is refused. Check the result with `python -m preflight` on a stack with the model.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catalog.models import MODELS, Architecture
from config.errors import ConfigError
from config.model import ModelConfig
from preflight.hub import catalog_path, facts_document, hub_facts
from preflight.model_source import resolve_architecture

CATALOG = Path(__file__).resolve().parent.parent / "catalog" / "models.py"
OPENING = "MODELS: dict[str, Architecture] = {\n"


def entry(repo_id: str, arch: Architecture, source: str) -> str:
    """The catalog entry: the fields that differ from Architecture's defaults, by name."""
    defaults = {field.name: field.default for field in dataclasses.fields(Architecture)}
    values = [(name, value) for name, value in dataclasses.asdict(arch).items() if value != defaults[name]]
    lines = [f"    # {source}", f"    {json.dumps(repo_id)}: Architecture("]
    lines += [f"        {name}={value!r}," for name, value in values]
    return "\n".join([*lines, "    ),"]) + "\n"


def with_model(catalog: str, repo_id: str, arch: Architecture, source: str) -> str:
    """The catalog's text with the entry appended to MODELS (before the dict's closing brace)."""
    start = catalog.index(OPENING) + len(OPENING)
    end = catalog.index("\n}\n", start) + 1
    return catalog[:end] + entry(repo_id, arch, source) + catalog[end:]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/add_model.py", description=__doc__.splitlines()[0])
    parser.add_argument("repo_id", help="the Hugging Face repository id, as users type it in model.id")
    parser.add_argument("config_json", type=Path, nargs="?", help="the repository's config.json, downloaded")
    parser.add_argument("--hub", action="store_true", help="keep the repository's Hub facts (catalog/data/hub/)")
    parser.add_argument("--revision", help="with --hub: the commit or tag to read (default: main)")
    parser.add_argument("--source", required=True, help="where the config.json and the parameter count come from")
    parser.add_argument("--parameters", type=int, help="the published parameter count (else estimated from the shape)")
    args = parser.parse_args(argv)
    if args.repo_id in MODELS or catalog_path(args.repo_id).exists():
        print(f"{args.repo_id} is in the catalog already (catalog/models.py or catalog/data/hub/).", file=sys.stderr)
        return 1
    if args.hub:
        return keep_hub_facts(args.repo_id, args.revision, args.source)
    if args.config_json is None:
        parser.error("give the CONFIG_JSON file, or --hub to read the repository from the Hub")
    model = ModelConfig(id=args.repo_id, config_json=str(args.config_json.resolve()), num_parameters=args.parameters)
    arch = resolve_architecture(model)
    CATALOG.write_text(with_model(CATALOG.read_text(encoding="utf-8"), args.repo_id, arch, args.source), encoding="utf-8")
    print(f"added {args.repo_id} to {CATALOG.relative_to(CATALOG.parent.parent)}")
    return 0


def keep_hub_facts(repo_id: str, revision: str | None, source: str) -> int:
    """Read the repository's facts from the Hub (or the Hub cache) and keep them in catalog/data/hub/."""
    try:
        facts = hub_facts(repo_id, revision)
    except ConfigError as error:
        print(error.render(), file=sys.stderr)
        return 1
    path = catalog_path(repo_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"source": source, **facts_document(facts)}, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"kept the Hub facts of {repo_id} at {facts.sha} in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
