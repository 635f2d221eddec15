"""Generate catalog/data/vllm/<version>.json from the released vLLM wheels (CPU only, nothing imported).

For each version: `pip download --no-deps --only-binary=:all: vllm==X` into a temporary directory, hash
the wheel (sha256), read the Python sources below out of the zip with `ast` (vLLM is never imported: that
would need torch and a GPU stack), write the table, delete the wheel. One wheel at a time (they are
300-500 MB each).

What is read, per wheel:
- serve flags: every `add_argument("--flag", ...)` in vllm/engine/arg_utils.py,
  vllm/entrypoints/openai/cli_args.py, vllm/entrypoints/common/cli_args.py and
  vllm/entrypoints/cli/serve.py; plus, for classes whose `add_cli_args` builds flags from
  `get_kwargs(cls)` (FrontendArgs and its bases), every dataclass field as `--field-name`. A flag whose
  action is `argparse.BooleanOptionalAction`, or whose `**X_kwargs["field"]` names a `bool` field of the
  config class (`get_kwargs` turns those into BooleanOptionalAction), also gets its `--no-` form.
- choices of the flags the program renders (--dtype, --kv-cache-dtype, --quantization, --block-size): a
  literal `choices=`, a module-level list/tuple/`Literal[...]` it names, or the `Literal[...]` annotation of
  the config field behind `**X_kwargs["field"]` (files under vllm/config*, model_executor/layers/
  quantization/__init__.py, utils).
- Prometheus metrics: every call with `name="vllm:..."` in vllm/engine/metrics.py (V0) and
  vllm/v1/metrics/*.py, vllm/v1/spec_decode/metrics.py (V1); the type from the constructor's name.
- memory-accounting features (which formula vLLM uses), each with the file and line it was found at:
  V0 worker's use of memory_profiling (PR #10511), V1 as default engine (envs.py VLLM_USE_V1),
  the V1 worker's use of memory_profiling (PR #19312), and the CUDA-graph estimate default
  (envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, PR #30515), and whether the V1 sampler uses
  FlashInfer's top-k/top-p kernel by default (envs.py VLLM_USE_FLASHINFER_SAMPLER, PRs #26859, #40376).
- the OpenAI-server batch defaults (max_num_seqs, max_num_batched_tokens) from the branches of
  EngineArgs (get_batch_defaults, or the older inline code), with the branch condition as source text.

Usage: python scripts/vllm_release_tables.py [VERSION ...]   (default: every release >= 0.6.0 on PyPI)
       python scripts/vllm_release_tables.py --refresh-memory [VERSION ...]   (re-read the memory features of
       existing tables; default: every table)
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "catalog" / "data" / "vllm"
FLAG_FILES = (
    "vllm/engine/arg_utils.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/common/cli_args.py",
    "vllm/entrypoints/cli/serve.py",
    "vllm/entrypoints/launchers/cli_args.py",
)
METRIC_FILES = re.compile(r"^vllm/(engine/metrics\.py|v1/metrics/[a-z_]+\.py|v1/spec_decode/metrics\.py)$")
SYMBOL_FILES = re.compile(
    r"^vllm/(config\.py|config/[a-z_]+\.py|model_executor/layers/quantization/__init__\.py"
    r"|utils\.py|utils/__init__\.py|engine/arg_utils\.py)$"
)
BACKEND_FILES = re.compile(r"^vllm/(platforms/interface|attention/backends/registry|v1/attention/backends/registry)\.py$")
# VLLM_ENABLE_SCALE_OUT_ENDPOINTS: the render routes' switch before --enable-scale-out (catalog/vllm_flags.py).
ENVS = (
    "VLLM_ATTENTION_BACKEND",
    "VLLM_ENGINE_READY_TIMEOUT_S",
    "VLLM_USE_V1",
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
    "VLLM_ENABLE_SCALE_OUT_ENDPOINTS",
)
CHOICE_FLAGS = ("--dtype", "--kv-cache-dtype", "--quantization", "--block-size")
SAMPLER_FILE = "vllm/v1/sample/ops/topk_topp_sampler.py"


def pypi_versions() -> list[str]:
    text = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "vllm"], capture_output=True, text=True, check=True
    ).stdout
    listed = text.split("Available versions:", 1)[1].split("\n", 1)[0]
    versions = [v.strip() for v in listed.split(",")]
    return [v for v in versions if _key(v) >= (0, 6, 0)]


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("post")[0])[:4])


def download(version: str, into: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-q",
            "-d",
            str(into),
            f"vllm=={version}",
        ],
        check=True,
    )
    wheels = sorted(into.glob("vllm-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one wheel for {version}, found {wheels}")
    return wheels[0]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sources(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        wanted = [
            n
            for n in archive.namelist()
            if n in FLAG_FILES
            or METRIC_FILES.match(n)
            or SYMBOL_FILES.match(n)
            or BACKEND_FILES.match(n)
            or n in ("vllm/envs.py", "vllm/worker/worker.py", "vllm/v1/worker/gpu_worker.py", "vllm/platforms/cuda.py")
            or n == SAMPLER_FILE
        ]
        return {name: archive.read(name).decode() for name in wanted}


# ---------------------------------------------------------------- symbols (Literal aliases, lists)


def literal_values(node: ast.AST, symbols: dict[str, ast.AST], depth: int = 0) -> list[object] | None:
    """Values of a choices expression: a list/tuple literal, Literal[...], a name bound to one, a union."""
    if depth > 24:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values: list[object] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                inner = literal_values(element.value, symbols, depth + 1)
                if inner is None:
                    return None
                values += inner
            elif isinstance(element, ast.Constant):
                values.append(element.value)
            else:
                inner = literal_values(element, symbols, depth + 1)
                if inner is None:
                    return None
                values += inner
        return values
    if isinstance(node, ast.Dict):  # 0.6.x: QUANTIZATION_METHODS = {"aqlm": AQLMConfig, ...}
        return [key.value for key in node.keys if isinstance(key, ast.Constant)]
    if isinstance(node, ast.Subscript) and _name(node.value) in ("Literal", "typing.Literal"):
        return literal_values(node.slice if isinstance(node.slice, ast.Tuple) else ast.Tuple([node.slice]), symbols, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # X | None
        left, right = (literal_values(side, symbols, depth + 1) for side in (node.left, node.right))
        return (left or []) + (right or []) if left is not None or right is not None else None
    if isinstance(node, ast.Subscript) and _name(node.value) in ("Optional", "Union"):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        found = [literal_values(part, symbols, depth + 1) for part in parts]  # torch.dtype etc. are skipped
        return [v for values in found if values for v in values] if any(f is not None for f in found) else None
    if isinstance(node, ast.Subscript) and _name(node.value) in ("SkipValidation", "Annotated"):
        wrapped = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return literal_values(wrapped, symbols, depth + 1)
    if isinstance(node, ast.Call) and _name(node.func) in ("list", "get_args", "tuple") and node.args:
        return literal_values(node.args[0], symbols, depth + 1)
    if isinstance(node, ast.Constant):
        return [] if node.value is None else None
    name = _name(node)
    if name and name.split(".")[-1] in symbols:
        return literal_values(symbols[name.split(".")[-1]], symbols, depth + 1)
    return None


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return None


def module_symbols(trees: dict[str, ast.Module]) -> dict[str, ast.AST]:
    symbols: dict[str, ast.AST] = {}
    for tree in trees.values():
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                symbols.setdefault(stmt.targets[0].id, stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                symbols.setdefault(stmt.target.id, stmt.value)
    return symbols


def class_fields(trees: dict[str, ast.Module]) -> dict[str, dict[str, ast.AST]]:
    """Class name -> {field: annotation}, bases' fields included (same name space across files)."""
    raw: dict[str, tuple[list[str], dict[str, ast.AST]]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name not in raw:
                own: dict[str, ast.AST] = {
                    s.target.id: s.annotation
                    for s in node.body
                    if isinstance(s, ast.AnnAssign)
                    and isinstance(s.target, ast.Name)
                    and not s.target.id.startswith("_")
                    and "ClassVar" not in ast.unparse(s.annotation)
                }
                raw[node.name] = ([b for b in (_name(base) for base in node.bases) if b], own)

    def resolve(name: str, seen: frozenset[str] = frozenset()) -> dict[str, ast.AST]:
        if name not in raw or name in seen:
            return {}
        bases, own = raw[name]
        merged: dict[str, ast.AST] = {}
        for base in bases:
            merged.update(resolve(base.split(".")[-1], seen | {name}))
        return {**merged, **own}

    return {name: resolve(name) for name in raw}


# ---------------------------------------------------------------- flags


def _kwargs_classes(tree: ast.Module) -> dict[str, str]:
    """`model_kwargs = get_kwargs(ModelConfig)` -> {"model_kwargs": "ModelConfig"}."""
    found = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _name(node.value.func) in ("get_kwargs", "_get_kwargs")
            and node.value.args
            and isinstance(node.targets[0], ast.Name)
        ):
            cls = _name(node.value.args[0])
            if cls:
                found[node.targets[0].id] = cls.split(".")[-1]
    return found


def _field_behind(call: ast.Call, kwargs_classes: dict[str, str]) -> tuple[str, str] | None:
    """`**model_kwargs["max_model_len"]` -> ("ModelConfig", "max_model_len")."""
    unpacked = [k.value for k in call.keywords if k.arg is None]
    for value in unpacked:  # `**{**cache_kwargs["x"], "default": None}` nests one level
        if isinstance(value, ast.Dict):
            unpacked += [v for key, v in zip(value.keys, value.values, strict=True) if key is None]
    for value in unpacked:
        if (
            isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and value.value.id in kwargs_classes
            and isinstance(value.slice, ast.Constant)
        ):
            return kwargs_classes[value.value.id], str(value.slice.value)
    return None


def _is_bool(annotation: ast.AST | None) -> bool:
    return annotation is not None and re.search(r"\bbool\b", ast.unparse(annotation)) is not None


def flags_of(
    trees: dict[str, ast.Module], fields: dict[str, dict[str, ast.AST]], symbols: dict[str, ast.AST]
) -> tuple[set[str], dict[str, list[object]], dict[str, str]]:
    flags: set[str] = set()
    choices: dict[str, list[object]] = {}
    origin: dict[str, str] = {}
    for path, tree in trees.items():
        if path not in FLAG_FILES:
            continue
        kwargs_classes = _kwargs_classes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                names = [
                    a.value
                    for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
                ]
                if not names:
                    continue
                behind = _field_behind(node, kwargs_classes)
                annotation = fields.get(behind[0], {}).get(behind[1]) if behind else None
                action = next((ast.unparse(k.value) for k in node.keywords if k.arg == "action"), "")
                boolean = "BooleanOptionalAction" in action or (behind is not None and _is_bool(annotation))
                for name in names:
                    flags.add(name)
                    origin.setdefault(name, f"{path}:{node.lineno}")
                    if boolean and name.startswith("--"):
                        flags.add("--no-" + name[2:])
                values = _choices(node, annotation, symbols)
                if values is not None and names[0] in CHOICE_FLAGS:
                    choices[names[0]] = values
        flags |= _dataclass_flags(tree, path, fields, origin)
    return flags, choices, origin


def _choices(call: ast.Call, annotation: ast.AST | None, symbols: dict[str, ast.AST]) -> list[object] | None:
    explicit = next((k.value for k in call.keywords if k.arg == "choices"), None)
    if explicit is not None:
        return literal_values(explicit, symbols)
    if annotation is not None:
        return literal_values(annotation, symbols)
    return None


def _dataclass_flags(tree: ast.Module, path: str, fields: dict[str, dict[str, ast.AST]], origin: dict[str, str]) -> set[str]:
    """Classes whose add_cli_args turns every field of `get_kwargs(cls)` into `--field-name`."""
    flags: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            text = ast.unparse(item) if isinstance(item, ast.FunctionDef) and item.name == "add_cli_args" else ""
            if _builds_field_flags(text, node.name):
                for field, annotation in fields.get(node.name, {}).items():
                    flag = "--" + field.replace("_", "-")
                    flags.add(flag)
                    origin.setdefault(flag, f"{path}:{node.lineno} ({node.name}.{field})")
                    if _is_bool(annotation):
                        flags.add("--no-" + flag[2:])
    # subclasses inherit add_cli_args: FrontendArgs(BaseFrontendArgs)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            _name(b) and any(isinstance(c, ast.ClassDef) and c.name == _name(b) and _has_field_cli(c) for c in ast.walk(tree))
            for b in node.bases
        ):
            for field, annotation in fields.get(node.name, {}).items():
                flag = "--" + field.replace("_", "-")
                flags.add(flag)
                origin.setdefault(flag, f"{path}:{node.lineno} ({node.name}.{field})")
                if _is_bool(annotation):
                    flags.add("--no-" + flag[2:])
    return flags


def _builds_field_flags(text: str, class_name: str) -> bool:
    """add_cli_args turns each field of get_kwargs(cls) (or get_kwargs(ThisClass)) into --field-name."""
    return f"get_kwargs({class_name})" in text or ("get_kwargs(cls)" in text and "replace('_', '-')" in text)


def _has_field_cli(node: ast.ClassDef) -> bool:
    return any(
        isinstance(i, ast.FunctionDef) and i.name == "add_cli_args" and _builds_field_flags(ast.unparse(i), node.name)
        for i in node.body
    )


# ---------------------------------------------------------------- metrics


def metrics_of(trees: dict[str, ast.Module], v1_default: bool) -> dict[str, str]:
    metrics: dict[str, str] = {}
    for path, tree in sorted(trees.items()):
        if not METRIC_FILES.match(path) or (path == "vllm/engine/metrics.py") == v1_default:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = next(
                (
                    k.value.value
                    for k in node.keywords
                    if k.arg == "name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
                ),
                None,
            )
            if name is None and node.args and isinstance(node.args[0], ast.Constant):
                name = node.args[0].value if isinstance(node.args[0].value, str) else None
            if not name or not name.startswith("vllm:"):
                continue
            kind = _metric_kind(ast.unparse(node.func).lower())
            if kind:
                metrics[_exposed(name, kind)] = kind
    return dict(sorted(metrics.items()))


def _metric_kind(func: str) -> str | None:
    for kind in ("histogram", "counter", "gauge"):
        if kind in func:
            return kind
    return None


def _exposed(name: str, kind: str) -> str:
    """prometheus_client exposes a counter as <name>_total (a trailing _total in the name is not doubled)."""
    return name if kind != "counter" or name.endswith("_total") else name + "_total"


# ---------------------------------------------------------------- memory features and batch defaults


def _find(texts: dict[str, str], path: str, pattern: str) -> str | None:
    text = texts.get(path)
    if text is None:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(pattern, line):
            return f"{path}:{number}"
    return None


def _env_default(texts: dict[str, str], variable: str) -> tuple[str | None, str | None]:
    """The default string of `os.getenv("VAR", "x")` / `os.environ.get("VAR", "x")` in envs.py."""
    text = texts.get("vllm/envs.py", "")
    match = re.search(rf'["\']{variable}["\']\s*,\s*["\']([^"\']*)["\']', text)
    if not match:
        return None, None
    line = text[: match.start()].count("\n") + 1
    return match.group(1), f"vllm/envs.py:{line}"


def flashinfer_sampler(texts: dict[str, str]) -> tuple[bool, str | None]:
    """Whether the V1 sampler uses FlashInfer's top-k/top-p kernel when VLLM_USE_FLASHINFER_SAMPLER is unset.

    The unset value is the `else` of the envs.py lambda (None or True); None means on only where the sampler
    tests `is not False`, off where it tests truthiness (PR #26859). Releases whose sampler falls back to
    PyTorch when `flashinfer_version >= "0.2.3"` ("not backward compatible", PR #14815, until #15777) are off."""
    envs = texts.get("vllm/envs.py", "")
    match = re.search(r'"VLLM_USE_FLASHINFER_SAMPLER":\s*lambda:.*?else (None|True|False)', envs, re.DOTALL)
    sampler = texts.get(SAMPLER_FILE)
    if match is None or sampler is None:
        return False, None
    line = envs[: match.end()].count("\n") + 1
    unset = match.group(1)
    on = unset == "True" or (unset == "None" and "VLLM_USE_FLASHINFER_SAMPLER is not False" in sampler)
    on = on and not re.search(r'flashinfer_version >= "0\.2\.3"', sampler)
    return on, f"vllm/envs.py:{line}"


def memory_features(texts: dict[str, str]) -> dict[str, object]:
    use_v1, use_v1_at = _env_default(texts, "VLLM_USE_V1")
    graphs, graphs_at = _env_default(texts, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
    v0_profiling = _find(texts, "vllm/worker/worker.py", r"with memory_profiling\(")
    v1_profiling = _find(texts, "vllm/v1/worker/gpu_worker.py", r"with memory_profiling\(")
    v1_default = use_v1 == "1" or ("vllm/worker/worker.py" not in texts and "vllm/v1/worker/gpu_worker.py" in texts)
    sampler_on, sampler_at = flashinfer_sampler(texts)
    return {
        "v1_default": v1_default,
        "v1_default_source": use_v1_at or ("no V0 worker in the wheel" if v1_default else None),
        "v0_memory_profiling": v0_profiling,
        "v1_memory_profiling": v1_profiling,
        "cudagraph_estimate_default": graphs in ("1", "True", "true") if graphs is not None else False,
        "cudagraph_estimate_source": graphs_at,
        "flashinfer_sampler_default": sampler_on,
        "flashinfer_sampler_source": sampler_at,
    }


def batch_defaults(tree: ast.Module | None) -> list[dict[str, object]]:
    """Each branch that sets the OpenAI-server max_num_seqs / max_num_batched_tokens, with its condition."""
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        body = _server_defaults(node.body)
        if body:
            found.append({"condition": ast.unparse(node.test), "line": node.lineno, **body})
            other = _server_defaults(node.orelse)
            if other and not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
                found.append({"condition": f"not ({ast.unparse(node.test)})", "line": node.orelse[0].lineno, **other})
    return found


def _server_defaults(statements: list[ast.stmt]) -> dict[str, int]:
    values: dict[str, int] = {}
    for stmt in statements:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
        name = _name(target) or ""
        if name.startswith("default_max_num") and isinstance(stmt.value, ast.Constant):  # 0.8.x: one int for all
            values[name] = int(str(stmt.value.value))
        if not isinstance(stmt.value, ast.Dict):
            continue
        for key, value in zip(stmt.value.keys, stmt.value.values, strict=True):
            if key is not None and "OPENAI_API_SERVER" in ast.unparse(key) and isinstance(value, ast.Constant):
                values[_name(target) or "?"] = int(str(value.value))
    return {("max_num_seqs" if "seqs" in k else "max_num_batched_tokens"): v for k, v in values.items()}


# ---------------------------------------------------------------- one release


def attention_backends(trees: dict[str, ast.Module]) -> tuple[list[str], str | None]:
    """Members of AttentionBackendEnum (newer) or _Backend (older): the names --attention-backend /
    VLLM_ATTENTION_BACKEND accept."""
    for path, tree in sorted(trees.items(), reverse=True):
        if not BACKEND_FILES.match(path):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in ("AttentionBackendEnum", "_Backend"):
                names = [
                    t.id
                    for s in node.body
                    if isinstance(s, ast.Assign)
                    for t in s.targets
                    if isinstance(t, ast.Name) and t.id.isupper()
                ]
                return names, f"{path}:{node.lineno}"
    return [], None


def environment(texts: dict[str, str]) -> list[str]:
    text = texts.get("vllm/envs.py", "")
    return [name for name in ENVS if re.search(rf'^\s*["\']{name}["\']\s*:', text, re.MULTILINE)]


def block_size_lines(texts: dict[str, str]) -> list[str]:
    """Where vLLM's CUDA platform sets the KV block size itself (16 default, 64 FlashMLA, ...)."""
    text = texts.get("vllm/platforms/cuda.py", "")
    return [
        f"vllm/platforms/cuda.py:{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        if re.search(r"block_size\s*=\s*\d+", line)
    ]


DEFAULT_FIELDS = {
    "EngineArgs": (
        "max_num_seqs",
        "max_num_batched_tokens",
        "gpu_memory_utilization",
        "block_size",
        "enable_prefix_caching",
        "enable_chunked_prefill",
    ),
    "SchedulerConfig": ("max_num_seqs", "max_num_batched_tokens"),
    "CacheConfig": ("gpu_memory_utilization", "block_size", "enable_prefix_caching"),
    "SpeculativeConfig": ("method", "revision", "model"),
}


def field_defaults(trees: dict[str, ast.Module]) -> dict[str, str]:
    """`Class.field` -> "default source (file:line)" for the defaults the preflight depends on."""
    found: dict[str, str] = {}
    for path, tree in sorted(trees.items()):
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or node.name not in DEFAULT_FIELDS:
                continue
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and stmt.target.id in DEFAULT_FIELDS[node.name]
                ):
                    value = ast.unparse(stmt.value) if stmt.value is not None else "(no default)"
                    found.setdefault(f"{node.name}.{stmt.target.id}", f"{value} ({path}:{stmt.lineno})")
    return dict(sorted(found.items()))


def table(version: str, wheel: Path) -> dict[str, Any]:
    texts = sources(wheel)
    trees = {path: ast.parse(text) for path, text in texts.items()}
    symbols = module_symbols({p: t for p, t in trees.items() if SYMBOL_FILES.match(p) or p in FLAG_FILES})
    fields = class_fields({p: t for p, t in trees.items() if SYMBOL_FILES.match(p) or p in FLAG_FILES})
    flags, choices, origin = flags_of(trees, fields, symbols)
    features = memory_features(texts)
    backends, backends_at = attention_backends(trees)
    return {
        "version": version,
        "wheel": wheel.name,
        "sha256": sha256(wheel),
        "files_read": sorted(texts),
        "flags": sorted(flags),
        "choices": {flag: [v for v in values if v is not None] for flag, values in sorted(choices.items())},
        "flag_sources": {flag: origin[flag] for flag in sorted(origin) if flag in (*CHOICE_FLAGS, "--block-size")},
        "metrics": metrics_of(trees, bool(features["v1_default"])),
        "memory": features,
        "batch_defaults": batch_defaults(trees.get("vllm/engine/arg_utils.py")),
        "attention_backends": backends,
        "attention_backends_source": backends_at,
        "speculative_methods": sorted(
            {str(v) for v in literal_values(symbols["SpeculativeMethod"], symbols) or []}
            if "SpeculativeMethod" in symbols
            else []
        ),
        "env": environment(texts),
        "block_size_lines": block_size_lines(texts),
        "defaults": field_defaults(trees),
    }


def refresh_memory(version: str) -> None:
    """Re-read only the memory features (and files read) of an existing table from its wheel."""
    target = OUT / f"{version}.json"
    data = json.loads(target.read_text())
    with tempfile.TemporaryDirectory(prefix="vllm-wheel-") as tmp:
        wheel = download(version, Path(tmp))
        if sha256(wheel) != data["sha256"]:
            raise RuntimeError(f"{version}: the wheel on PyPI is not the one the table was read from")
        texts = sources(wheel)
    data["files_read"] = sorted(texts)
    data["memory"] = memory_features(texts)
    target.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"{version}: memory {data['memory']}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--refresh-memory"]:
        for version in argv[1:] or sorted((p.stem for p in OUT.glob("*.json")), key=_key):
            refresh_memory(version)
        return 0
    versions = argv or pypi_versions()
    OUT.mkdir(parents=True, exist_ok=True)
    for version in versions:
        target = OUT / f"{version}.json"
        if target.exists():
            print(f"{version}: exists, skipped")
            continue
        with tempfile.TemporaryDirectory(prefix="vllm-wheel-") as tmp:
            try:
                wheel = download(version, Path(tmp))
                data = table(version, wheel)
            except (subprocess.CalledProcessError, RuntimeError, SyntaxError) as error:
                print(f"{version}: FAILED {error}")
                continue
        target.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        print(f"{version}: {len(data['flags'])} flags, {len(data['metrics'])} metrics, sha256 {data['sha256'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
