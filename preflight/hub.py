"""Model facts from the Hugging Face Hub: config.json, the safetensors headers and the gated flag, at a revision.

Read through huggingface_hub (`HfApi.model_info`, `hf_hub_download`, `get_safetensors_metadata`, which reads
each shard's header with range requests, never the weights), against `HF_ENDPOINT` when set. The token is
huggingface_hub's own (`HF_TOKEN`, or `huggingface-cli login`). What was read is kept in an on-disk cache
(`PREFLIGHT_HUB_CACHE`, default ~/.cache/vllm-serving/hub), one JSON file per repository and revision, so a
second preview needs no network; `HF_HUB_OFFLINE=1` (the CLI's --offline) reads only the cache. The catalog keeps
the same facts for the repositories it holds (catalog/data/hub/, one file each, written by `scripts/add_model.py
--hub` from a Hub read), used offline whenever no other revision is pinned. huggingface_hub is imported only
here, when the Hub itself is read: it is heavy and the catalog needs none of it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from catalog.models import MODELS
from config.errors import ConfigError, ConfigIssue, model_hint, show
from preflight.checkpoint import Tensor
from reading.files import FileReadError, read_text

CATALOG_FACTS = Path(__file__).resolve().parent.parent / "catalog" / "data" / "hub"  # Hub reads the catalog keeps
CACHE_FORMAT = 1
# ~90 B per tensor: a dense 70B model's 700 tensors take 60 KB, a 256-expert MoE's 100,000 about 9 MB.
MAX_CACHE_BYTES = 64 * 1024 * 1024
MAX_CONFIG_BYTES = 4 * 1024 * 1024
TOKEN_FIX = "export HF_TOKEN=<token> for the CLI (pulumi config set --secret hf_token <token> for the deploy)"


@dataclass(frozen=True)
class HubFacts:
    """What the Hub says about one repository at one revision. `source`: "Hub" (read now) or "Hub cache"."""

    repo_id: str
    revision: str  # as asked ("main" when unpinned)
    sha: str | None  # the commit the revision resolved to
    gated: bool
    config: dict[str, Any]
    tensors: tuple[Tensor, ...]
    source: str = "Hub"


def cache_dir() -> Path:
    configured = os.environ.get("PREFLIGHT_HUB_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "vllm-serving" / "hub"


def catalog_path(repo_id: str) -> Path:
    return CATALOG_FACTS / f"{repo_id.replace('/', '--')}.json"


def catalog_facts(repo_id: str) -> HubFacts | None:
    """The facts the catalog keeps for the repository (scripts/add_model.py --hub copies a Hub read there)."""
    path = catalog_path(repo_id)
    facts = _read_facts(path, repo_id, "main") if path.is_file() else None
    return None if facts is None else replace(facts, revision=facts.sha or "main", source=f"catalog (the Hub at {facts.sha})")


def cache_path(repo_id: str, revision: str) -> Path:
    return cache_dir() / f"{repo_id.replace('/', '--')}@{revision.replace('/', '--')}.json"


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


# The facts read in this process, by what decides them: the preflight sizes the stack's model once for the
# stack and again for each alternative it suggests (about 30 layouts), which must not read the Hub again.
_READ: dict[tuple[str, ...], HubFacts] = {}


def hub_facts(repo_id: str, revision: str | None) -> HubFacts:
    """The facts at `revision`: the catalog's copy when it is of that revision (or none is pinned), else from the
    Hub (and cached), else from the cache; read once per process. Raises ConfigError naming the key."""
    kept = catalog_facts(repo_id)
    if kept is not None and revision in (None, kept.sha):
        return kept
    rev = revision or "main"
    key = (repo_id, rev, os.environ.get("HF_ENDPOINT", ""), str(cache_dir()), str(offline()), os.environ.get("HF_TOKEN", ""))
    if key not in _READ:
        _READ[key] = _facts(repo_id, rev)
    return _READ[key]


def _facts(repo_id: str, rev: str) -> HubFacts:
    if offline():
        return read_cache(repo_id, rev) or _fail("model.id", repo_id, OFFLINE_UNCACHED, FILL_CACHE)
    try:
        facts = _read_hub(repo_id, rev)
    except _NetworkDown as down:
        cached = read_cache(repo_id, rev)
        if cached is None:
            _fail("model.id", repo_id, UNREACHABLE.format(down=down) + _hint(repo_id), RETRY)
        return replace(cached, source=f"Hub cache (the Hub is unreachable: {down})")
    write_cache(facts)
    return facts


OFFLINE_UNCACHED = (
    "is neither in the catalog nor in the Hub cache (PREFLIGHT_HUB_CACHE), and --offline (HF_HUB_OFFLINE) forbids "
    "reading the Hub"
)
FILL_CACHE = "run once with the network to fill the cache, or use a catalog model."
UNREACHABLE = (
    "is not in the catalog and cannot be read: the Hub is unreachable ({down}) and the Hub cache "
    "(PREFLIGHT_HUB_CACHE) has no copy"
)
RETRY = "retry with the network, or use a catalog model."
NOT_FOUND = "is neither in the catalog nor a repository on the Hub (404; a private one looks the same without a token)"
NOT_FOUND_FIX = (
    f"check the spelling, set hf_token for a private repository ({TOKEN_FIX}), or describe the model with "
    "model.architecture (config.json keys) or model.config_json."
)
GATED_NO_TOKEN = "is gated on the Hub and no token is set (401)"
GATED_NOT_ACCEPTED = "is gated and the token's account has not accepted its licence (403)"
NO_REVISION = "is not a revision of {repo} on the Hub (404)"
NO_CONFIG = "has no config.json on the Hub to size it from"
NO_HEADERS_FIX = "describe the model with model.architecture (config.json keys) and model.architecture.num_parameters."


class _NetworkDown(Exception):
    pass


def _hint(repo_id: str) -> str:
    hint = model_hint(repo_id, list(MODELS))
    return f" ({hint})" if hint else ""


def _fail(key: str, value: str, cause: str, fix: str) -> NoReturn:
    raise ConfigError([ConfigIssue(key, f"{show(value)} {cause}.", fix)])


def _gated(repo_id: str, has_token: bool) -> NoReturn:
    if has_token:
        _fail("hf_token", repo_id, GATED_NOT_ACCEPTED, "accept the licence on the model's page with the token's account.")
    _fail("hf_token", repo_id, GATED_NO_TOKEN, f"set hf_token: {TOKEN_FIX}.")


def _read_hub(repo_id: str, revision: str) -> HubFacts:
    import httpx2
    from huggingface_hub import HfApi, get_token
    from huggingface_hub import errors as hub_errors
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()  # stderr carries the preflight's notes, not a bar per shard
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)
    try:
        info = api.model_info(repo_id, revision=revision)
        pinned = info.sha or revision
        config = _load_config(Path(api.hf_hub_download(repo_id, "config.json", revision=pinned)), repo_id)
        try:
            files = list(api.get_safetensors_metadata(repo_id, revision=pinned).files_metadata.values())
        except hub_errors.NotASafetensorsRepoError:  # .bin weights only: sized from config.json alone
            files = []
    except hub_errors.GatedRepoError:
        _gated(repo_id, get_token() is not None)
    except hub_errors.RevisionNotFoundError:
        _fail("model.revision", revision, NO_REVISION.format(repo=repo_id), "pin a commit sha or tag the repository has.")
    except hub_errors.RepositoryNotFoundError:
        _fail("model.id", repo_id, NOT_FOUND + _hint(repo_id), NOT_FOUND_FIX)
    except hub_errors.RemoteEntryNotFoundError:
        _fail("model.id", repo_id, NO_CONFIG, "describe it with model.architecture (config.json keys).")
    except hub_errors.SafetensorsParsingError as error:
        _fail("model.id", repo_id, f"has a safetensors header that cannot be parsed ({str(error)[:120]})", NO_HEADERS_FIX)
    except (httpx2.TransportError, hub_errors.LocalEntryNotFoundError, hub_errors.OfflineModeIsEnabled) as error:
        raise _NetworkDown(type(error).__name__) from None
    except hub_errors.HfHubHTTPError as error:  # a 5xx, a proxy's answer: the Hub is not usable now
        raise _NetworkDown(f"HTTP {error.response.status_code if error.response is not None else '?'}") from None
    tensors = tuple(
        Tensor(name, tensor.dtype, tuple(tensor.shape), tensor.data_offsets[1] - tensor.data_offsets[0])
        for file in files
        for name, tensor in file.tensors.items()
    )
    return HubFacts(repo_id, revision, info.sha, bool(info.gated), config, tensors)


def _load_config(path: Path, repo_id: str) -> dict[str, Any]:
    try:
        data = json.loads(read_text(path, MAX_CONFIG_BYTES, "a config.json is a few kilobytes"))
    except (FileReadError, ValueError) as error:
        _fail("model.id", repo_id, f"has a config.json that cannot be read ({str(error)[:120]})", "use model.architecture.")
    if not isinstance(data, dict):
        _fail("model.id", repo_id, "has a config.json that is not a JSON mapping", "use model.architecture.")
    return data


def write_cache(facts: HubFacts) -> None:
    """Keep the facts for the next run; a cache that cannot be written only costs a Hub read next time."""
    path = cache_path(facts.repo_id, facts.revision)
    document = facts_document(facts)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        pass


def read_cache(repo_id: str, revision: str) -> HubFacts | None:
    """The cached facts, or None when there is no usable copy (absent, too large, or not this format)."""
    path = cache_path(repo_id, revision)
    return _read_facts(path, repo_id, revision) if path.exists() else None


def facts_document(facts: HubFacts) -> dict[str, Any]:
    """The facts as the cache and the catalog keep them (JSON)."""
    return {
        "format": CACHE_FORMAT,
        "repo_id": facts.repo_id,
        "revision": facts.revision,
        "sha": facts.sha,
        "gated": facts.gated,
        "config": facts.config,
        "tensors": [[t.name, t.dtype, list(t.shape), t.nbytes] for t in facts.tensors],
    }


def _read_facts(path: Path, repo_id: str, revision: str) -> HubFacts | None:
    try:
        data = json.loads(read_text(path, MAX_CACHE_BYTES, "a Hub cache entry is a few hundred kilobytes"))
        tensors = tuple(Tensor(str(n), str(d), tuple(int(x) for x in s), int(b)) for n, d, s, b in data["tensors"])
        if data.get("format") != CACHE_FORMAT or not isinstance(data["config"], dict):
            return None
        return HubFacts(repo_id, revision, data.get("sha"), bool(data.get("gated")), data["config"], tensors, "Hub cache")
    except (FileReadError, ValueError, KeyError, TypeError):
        return None
