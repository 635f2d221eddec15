"""Accepted means deployable: a stack `validation.assess` accepts renders, under the Pulumi mocks, objects the API
server admits (tests/admission.py: schema and CRDs, names, labels, int32 fields, references, selectors).

Stacks are drawn as features merged into the factories' base stack: delivery modes, LoRA adapters, exposure,
autoscaling and scale to zero, several nodes, cluster profiles, probe and start-up timings at and beyond their
bounds, under a few Pulumi stack names (a long one, one with capitals and dots). Only accepted stacks are
rendered; the refused ones are the config tests' (tests/test_every_config_error.py). The draws are derandomized and
bounded (the fast suite's budget); `HYPOTHESIS_PROFILE=long` draws many more.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from config.errors import ConfigError
from config.secrets import SECRET_KEYS
from config.stack import StackConfig
from tests import admission
from tests.factories import REPO, merge, raw_config
from tests.program import SECRET_VALUES, run_main
from validation import Outcome, assess
from validation.delivery import PULUMI_TIMEOUT_MAX_SECONDS
from validation.keys import validate_config

settings.register_profile(
    "deployable-fast", max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "deployable-long", max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
STACK = "test"  # the mocked program's stack, so the validation plans the same instance
PROFILE = "deployable-long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else "deployable-fast"

IRSA = {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/vllm-model-reader"}
BUCKET = {"mode": "object_storage", "object_storage": {"uri": "s3://models/llama-8b/", "service_account_annotations": IRSA}}
HUB_ADAPTER = {
    "name": "sql",
    "id": "org/sql-lora",
    "revision": "0123456789abcdef0123456789abcdef01234567",
    "rank": 16,
    "target_modules": ["q_proj", "v_proj"],
}
BUCKET_ADAPTER = {"name": "ops", "uri": "s3://models/adapters/ops/", "rank": 8, "target_modules": ["q_proj"]}
GATEWAY = {"gateway": {"name": "public", "namespace": "gateways"}}
INGRESS = {
    "ingress": {
        "host": "llm.example.com",
        "class_name": "nginx",
        "controller_namespace": "ingress-nginx",
        "controller_pod_selector": {"app.kubernetes.io/name": "ingress-nginx"},
    }
}
BIG = st.sampled_from([1, 5, 30, 3600, 99_999, 100_000, 10**6, 2**31 - 1, 2**31, 10**12])

# Each feature: a strategy of changes merged into the base stack.
FEATURES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "delivery": st.sampled_from(
        [
            {"delivery": BUCKET},
            {"delivery": merge(BUCKET, {"object_storage": {"copy_from_hub": True}}), "model": {"revision": "aaaa111"}},
            {"delivery": {"mode": "per_replica_volume"}, "replicas": 2},
            {"cache": {"storage_class_name": "efs-sc"}, "replicas": 2},
            {"model": {"local_path": "llama"}, "cache": {"existing_claim": "models"}},
        ]
    ),
    "lora": st.sampled_from([[HUB_ADAPTER], [BUCKET_ADAPTER], [HUB_ADAPTER, BUCKET_ADAPTER]]).map(
        lambda adapters: {"lora": {"adapters": adapters}}
    ),
    "gateway": BIG.map(
        lambda seconds: {
            "exposure": merge(GATEWAY, {"gateway": {"request_timeout_seconds": seconds}}),
            "security": {"require_api_key": True},  # a stack exposed outside its namespace requires one
        }
    ),
    "autoscaling": st.just({"autoscaling": {"enabled": True, "max_replica_count": 3}}),
    "api_key": st.just({"security": {"require_api_key": True}}),
    "multinode": st.just({"engine": {"tensor_parallel_size": 2, "nnodes": 2}, "cache": {"storage_class_name": "efs-sc"}}),
    "probes": st.fixed_dictionaries(
        {},
        optional={
            "readiness_timeout_seconds": BIG.filter(lambda s: s >= 5),
            "liveness_timeout_seconds": BIG.filter(lambda s: s >= 5),
            "startup_period_seconds": BIG,
            "engine_start_seconds": BIG,
            "startup_seconds": BIG,
        },
    ).map(lambda probes: {"probes": probes}),
    "image_pull": BIG.map(lambda seconds: {"server": {"image_pull_seconds": seconds}}),
    # A token-less stack (no Secret may be referenced) of a public model: Llama is gated (catalog/models.py).
    "no_hf_token": st.just({"model": {"id": "Qwen/Qwen2.5-7B-Instruct"}}),
    "profile": st.sampled_from(["generic", "gpu-operator", "gke", "eks-karpenter", "aks", "openshift"]).map(
        lambda profile: {"cluster": {"profile": profile}}
    ),
    "routing": st.just({"routing": {"enabled": True}, "replicas": 2, "security": {"require_api_key": True}}),
    "ingress": st.just({"exposure": {"ingress": INGRESS}, "security": {"require_api_key": True}}),
    "inference_pool": st.just(
        {
            "exposure": merge(GATEWAY, {"gateway": {"backend": "InferencePool", "endpoint_picker": {"service": "llama-epp"}}}),
            "security": {"require_api_key": True},
        }
    ),
    "scale_to_zero": st.just(
        {
            "autoscaling": {
                "enabled": True,
                "min_replica_count": 0,
                "max_replica_count": 2,
                "http_add_on": {"version": "0.15.0"},
            },
            # the route must wait out a start from zero (the default 300 s would not: validation refuses it)
            "exposure": merge(GATEWAY, {"gateway": {"request_timeout_seconds": 3600}}),
            "security": {"require_api_key": True},
        }
    ),
    "quiet": st.just({"monitoring": {"enabled": False}, "smoke_test": {"enabled": False}}),
    "existing_namespace": st.just({"namespace": {"name": "llm", "create": False}}),
    "prepull": st.just({"server": {"prepull_image": True, "image_pull_secrets": ["registry"]}}),
}


# Pulumi stack names: the instance (and every object's name) is derived from it (plan/names.py instance_name).
STACK_NAMES = st.sampled_from([STACK, "x" * 60, "Prod_EU.west-1"])


@st.composite
def stacks(draw: st.DrawFn) -> tuple[dict[str, Any], bool, str]:
    """A raw stack, whether the operator set the hf_token secret, and the Pulumi stack's name."""
    chosen = draw(st.lists(st.sampled_from(sorted(FEATURES)), unique=True, min_size=1, max_size=5))
    raw = raw_config()
    for name in chosen:
        raw = merge(raw, draw(FEATURES[name]))
    return raw, "no_hf_token" not in chosen, draw(STACK_NAMES)


def user_provided(cfg: StackConfig) -> set[tuple[str, str]]:
    """The objects the stack names as the user's, which the program references but does not render."""
    provided = {("Secret", name) for name in cfg.server.image_pull_secrets}
    if cfg.delivery.object_storage is not None and cfg.delivery.object_storage.credentials_secret:
        provided.add(("Secret", cfg.delivery.object_storage.credentials_secret))
    if cfg.cache.existing_claim:
        provided.add(("PersistentVolumeClaim", cfg.cache.existing_claim))
    return provided


def accepted(raw: dict[str, Any], hf_token: bool, stack: str = STACK) -> StackConfig | None:
    """The typed stack when the validation accepts it (the preflight fits), else None."""
    try:
        cfg = validate_config(raw)
    except ConfigError:
        return None
    secrets = frozenset(SECRET_KEYS) - (set() if hf_token else {"hf_token"})
    verdict = assess(cfg, secrets, stack=stack, hf_token=hf_token)
    return cfg if verdict.outcome is Outcome.FITS and not verdict.issues else None


def deploy_problems(raw: dict[str, Any], hf_token: bool, stack: str = STACK) -> list[str]:
    """Render the accepted stack with the Pulumi mocks (__main__.py) and check every registered object."""
    cfg = accepted(raw, hf_token, stack)
    assert cfg is not None, "the stack is refused: nothing to deploy"
    secrets = {"api_key": SECRET_VALUES["api_key"]}
    registered, error = run_main({**raw, **secrets}, tuple(secrets), stack=stack, hf_token=hf_token)
    assert error is None, f"the program stopped on a stack the validation accepts: {error!r}"
    return admission.stack_problems(admission.registered_objects(registered.resources), user_provided(cfg))


@settings(settings.get_profile(PROFILE))
@given(stacks())
@example((merge(raw_config(), {"delivery": BUCKET, "lora": {"adapters": [HUB_ADAPTER]}}), True, STACK))
@example((merge(raw_config(), {"model": {"local_path": "llama"}, "cache": {"existing_claim": "models"}}), True, STACK))
def test_every_accepted_stack_renders_objects_the_api_server_admits(drawn: tuple[dict[str, Any], bool, str]) -> None:
    raw, hf_token, stack = drawn
    assume(accepted(raw, hf_token, stack) is not None)
    assert deploy_problems(raw, hf_token, stack) == []


def test_the_check_finds_a_secret_that_is_neither_rendered_nor_provided() -> None:
    volumes = [{"name": "t", "secret": {"secretName": "llama-hf-token"}}]
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "n"},
        "spec": {"containers": [{"name": "c"}], "volumes": volumes},
    }
    assert admission.reference_problems([pod]) == [
        "Pod 'p' pod: Secret 'llama-hf-token' is neither rendered nor provided by the user"
    ]


def test_the_check_finds_a_network_policy_that_selects_no_rendered_pod() -> None:
    policy = {
        "kind": "NetworkPolicy",
        "metadata": {"name": "np", "namespace": "n"},
        "spec": {"podSelector": {"matchLabels": {"a": "b"}}},
    }
    assert admission.selector_problems([policy]) == [
        "NetworkPolicy 'np': selector {'matchLabels': {'a': 'b'}} selects no rendered pod"
    ]


def test_the_check_finds_a_probe_timeout_beyond_int32() -> None:
    container = {"name": "c", "image": "a:1", "readinessProbe": {"timeoutSeconds": 2**31}}
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container]}}
    assert admission.number_problems(pod) == [
        "Pod 'p' spec.containers[0].readinessProbe.timeoutSeconds: 2147483648 is not an int32 of at least 1"
    ]


def test_the_check_finds_a_memory_limit_with_both_an_exponent_and_a_suffix_is_no_quantity() -> None:
    container = {"name": "c", "image": "a:1", "resources": {"limits": {"memory": "9e300Gi"}}}
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container]}}
    assert admission.quantity_problems(pod) == [
        "Pod 'p' spec.containers[0].resources.limits.memory: '9e300Gi' is not a quantity"
    ]


def test_the_check_finds_an_empty_dir_size_beyond_two_to_the_sixty_three_bytes() -> None:
    volume = {"name": "tmp", "emptyDir": {"sizeLimit": "8589934592Gi"}}
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"volumes": [volume]}}
    assert admission.quantity_problems(pod) == [
        "Pod 'p' spec.volumes[0].emptyDir.sizeLimit: '8589934592Gi' is more than a quantity holds (2^63-1)"
    ]


@pytest.mark.parametrize("name", ["a" * 64, "Llama", "9-starts-with-a-digit"])
def test_the_check_refuses_a_service_name_the_api_server_refuses(name: str) -> None:
    assert admission.name_problem("Service", name) is not None


# --- What the property found, one behaviour each ----------------------------------------------------------------
def rendered(changes: dict[str, Any], hf_token: bool = True) -> list[dict[str, Any]]:
    """The objects the mocked program registers for the base stack with `changes`."""
    secrets = {"api_key": SECRET_VALUES["api_key"]}
    registered, error = run_main({**merge(raw_config(), changes), **secrets}, tuple(secrets), stack=STACK, hf_token=hf_token)
    assert error is None, error
    return admission.registered_objects(registered.resources)


def refusal(changes: dict[str, Any]) -> tuple[str, int]:
    """The program's error on the base stack with `changes`, and how many resources it registered before it."""
    registered, error = run_main(merge(raw_config(), changes), stack=STACK)
    assert error is not None, "the stack was accepted"
    return str(error), len([r for r in registered.resources if r.typ.startswith("kubernetes:")])


COMPONENT = "app.kubernetes.io/component"


def names_of(objects: list[dict[str, Any]], kind: str) -> list[str]:
    return [obj["metadata"]["name"] for obj in objects if obj["kind"] == kind]


def test_object_storage_with_a_hub_adapter_renders_the_token_secret_its_init_container_mounts() -> None:
    objects = rendered({"delivery": BUCKET, "lora": {"adapters": [HUB_ADAPTER]}})
    assert "vllm-test-hf-token" in names_of(objects, "Secret")
    assert admission.reference_problems(objects) == []


def test_object_storage_with_only_bucket_adapters_mounts_no_token() -> None:
    objects = rendered({"delivery": BUCKET, "lora": {"adapters": [BUCKET_ADAPTER]}})
    assert ("vllm-test-hf-token" in names_of(objects, "Secret"), "hf-token" in str(objects)) == (False, False)


@pytest.mark.parametrize(
    "changes",
    [
        {"model": {"local_path": "llama"}, "cache": {"existing_claim": "models"}},
        {"delivery": BUCKET},
        {"delivery": {"mode": "per_replica_volume"}, "replicas": 2},
    ],
    ids=["local path", "bucket filled elsewhere", "per-replica downloads"],
)
def test_no_model_cache_network_policy_is_rendered_without_a_fill_job(changes: dict[str, Any]) -> None:
    objects = rendered(changes)
    cache_pods = [
        obj for obj in objects if obj["metadata"].get("labels", {}).get(COMPONENT) == "model-cache" and obj["kind"] == "Job"
    ]
    assert (cache_pods, "vllm-test-model-cache" in names_of(objects, "NetworkPolicy")) == ([], False)


def test_the_hub_download_job_keeps_its_model_cache_network_policy() -> None:
    assert "vllm-test-model-cache" in names_of(rendered({}), "NetworkPolicy")


@pytest.mark.parametrize("key", ["readiness_timeout_seconds", "liveness_timeout_seconds"])
def test_a_probe_timeout_beyond_int32_is_refused_at_its_key_and_nothing_is_registered(key: str) -> None:
    error, registered = refusal({"probes": {key: 2**31}})
    assert (f"vllm-serving:probes.{key}: 2147483648" in error, "Fix:" in error, registered) == (True, True, 0)


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"probes": {"engine_start_seconds": 2**31 - 1}}, "probes.engine_start_seconds"),
        ({"probes": {"startup_seconds": 2**31 - 1}}, "probes.startup_seconds"),
        ({"server": {"image_pull_seconds": 2**31 - 1}}, "server.image_pull_seconds"),
        ({"probes": {"load_throughput_gib_per_s": 1e-300}}, "probes.load_throughput_gib_per_s"),
    ],
)
def test_a_first_start_beyond_progress_deadline_seconds_is_refused_at_the_key_that_drives_it(
    changes: dict[str, Any], key: str
) -> None:
    error, registered = refusal(changes)
    assert (f"vllm-serving:{key}: is " in error, "progressDeadlineSeconds" in error, "Fix:" in error) == (True, True, True)
    assert (len(error) < 2000, registered) == (True, 0)  # the 300-digit figures are cut


def test_a_rollout_longer_than_a_pulumi_timeout_holds_is_refused_at_the_replica_count() -> None:
    # 10^7 s a start fits progressDeadlineSeconds; a thousand of them one after another pass Go's 2^63-1 ns.
    error, registered = refusal({"replicas": 1000, "probes": {"startup_seconds": 10_000_000}})
    assert ("vllm-serving:replicas: is 1000" in error, "Pulumi timeout" in error, "probes.startup_seconds" in error) == (
        True,
        True,
        True,
    )
    assert registered == 0


def test_an_autoscaled_rollout_longer_than_a_pulumi_timeout_holds_is_refused_at_the_autoscaler_maximum() -> None:
    autoscaling = {"enabled": True, "min_replica_count": 1, "max_replica_count": 1000}
    error, registered = refusal({"autoscaling": autoscaling, "probes": {"startup_seconds": 10_000_000}})
    assert ("vllm-serving:autoscaling.max_replica_count: is 1000" in error, "Pulumi timeout" in error, registered) == (
        True,
        True,
        0,
    )


def test_a_rollout_within_a_pulumi_timeout_whose_gate_await_is_not_is_refused_at_the_replica_count() -> None:
    """Five first starts of 1,844,674,403 s are 15 s under the bound; Pulumi awaits the gate's Job a minute longer."""
    error, registered = refusal(
        {"replicas": 5, "probes": {"startup_seconds": 1_844_674_121}, "server": {"image_pull_seconds": 1}}
    )
    assert ("vllm-serving:replicas: is 5" in error, "Pulumi timeout" in error, registered) == (True, True, 0)


def test_the_kubernetes_page_states_the_pulumi_timeout_bound_the_validation_holds() -> None:
    assert f"{PULUMI_TIMEOUT_MAX_SECONDS:,} s" in (REPO / "docs" / "kubernetes.md").read_text()


def test_a_gateway_request_timeout_beyond_the_route_duration_is_refused_at_its_key() -> None:
    gateway = merge(GATEWAY, {"gateway": {"request_timeout_seconds": 100_000}})
    error, registered = refusal({"exposure": gateway, "security": {"require_api_key": True}})
    assert ("vllm-serving:exposure.gateway.request_timeout_seconds: 100000" in error, "99999" in error, registered) == (
        True,
        True,
        0,
    )


def test_the_longest_gateway_request_timeout_renders_a_duration_the_route_crd_admits() -> None:
    gateway = merge(GATEWAY, {"gateway": {"request_timeout_seconds": 99_999}})
    objects = rendered({"exposure": gateway, "security": {"require_api_key": True}})
    routes = [obj for obj in objects if obj["kind"] == "HTTPRoute"]
    assert [admission.schema_problems(route) for route in routes] == [[]]


@pytest.mark.parametrize(
    ("group", "key"),
    [
        ("server", "memory_gib"),
        ("server", "shm_size_gib"),
        ("server", "home_size_gib"),
        ("server", "tmp_size_gib"),
        ("cache", "size_gib"),
        ("cache", "download_memory_gib"),
    ],
)
def test_a_size_beyond_what_a_kubernetes_quantity_holds_is_refused_at_its_key(group: str, key: str) -> None:
    error, registered = refusal({group: {key: 1e300}})
    assert (f"vllm-serving:{group}.{key}: 1e+300" in error, "4294967295" in error, registered) == (True, True, 0)


def test_the_largest_sizes_accepted_render_quantities_the_api_server_holds() -> None:
    most = 2**32 - 1
    sizes = {"server": {"memory_gib": most, "shm_size_gib": most, "home_size_gib": most, "tmp_size_gib": most}}
    objects = rendered({**sizes, "cache": {"size_gib": most, "download_memory_gib": most}})
    assert [problem for obj in objects for problem in admission.quantity_problems(obj)] == []
