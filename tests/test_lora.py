"""LoRA adapters (config/lora.py, validation/lora.py, plan/lora.py, preflight/lora.py): their flags, where
each is on disk in every delivery mode, the GPU memory vLLM reserves for them, and the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.models import MODELS
from components.render.manifests import stack_manifests
from components.render.network_policy import render_network_policies
from config.errors import ConfigError
from config.lora import LoraConfig
from plan.lora import hub_snapshot
from plan.names import HF_HOME
from preflight.lora import LoraShape, lora_gib_per_gpu, lora_shape
from tests.factories import example_stack, make_config
from tests.kubernetes_fixtures import flag_value, plan_of
from tests.reachability import Host, Pod, allowed
from validation import check_stack

SHA = "0123456789abcdef0123456789abcdef01234567"
SQL = {"name": "sql", "id": "org/llama-sql-lora", "revision": SHA, "rank": 16, "target_modules": ["q_proj", "v_proj"]}
CHAT = {"name": "chat", "id": "org/llama-chat-lora", "revision": SHA, "rank": 8, "target_modules": ["o_proj"]}
BUCKET = {"uri": "s3://models/llama/", "copy_from_hub": True, "credentials_secret": "bucket-keys"}


def adapters(*items: dict[str, Any], **lora: Any) -> dict[str, Any]:
    return {"lora": {"adapters": list(items), **lora}}


def args_of(**changes: Any) -> tuple[str, ...]:
    return plan_of(make_config(**changes)).server.args


def issues_of(**changes: Any) -> list[str]:
    with pytest.raises(ConfigError) as error:
        make_config(**changes)
    return [issue.key for issue in error.value.issues]


def test_adapters_turn_lora_on_with_one_batch_slot_each_and_the_smallest_rank_holding_them() -> None:
    args = args_of(**adapters(SQL, CHAT))
    assert "--enable-lora" in args
    assert (flag_value(list(args), "--max-loras"), flag_value(list(args), "--max-lora-rank")) == ("2", "16")


def test_each_adapter_is_served_by_its_name_from_its_pinned_snapshot_on_the_volume() -> None:
    args = list(args_of(**adapters(SQL)))
    modules = args[args.index("--lora-modules") + 1]
    assert modules == f"sql={HF_HOME}/hub/models--org--llama-sql-lora/snapshots/{SHA}"


def test_hub_adapters_are_downloaded_with_the_base_model() -> None:
    plan = plan_of(make_config(**adapters(SQL)))
    assert plan.delivery.downloads[-1] == ("org/llama-sql-lora", SHA)


def test_a_stack_without_adapters_renders_no_lora_flag() -> None:
    assert not [arg for arg in args_of() if "lora" in arg]


def test_runtime_loading_sets_vllm_s_environment_switch() -> None:
    plan = plan_of(make_config(lora={"runtime_loading": True}))
    assert plan.server.env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"


def test_with_object_storage_an_init_container_fetches_hub_and_bucket_adapters_into_the_pod() -> None:
    bucket_adapter = {"name": "ops", "uri": "s3://models/adapters/ops/", "rank": 8, "target_modules": ["q_proj"]}
    delivery = {"mode": "object_storage", "object_storage": BUCKET}
    cfg = make_config(model={"revision": SHA}, delivery=delivery, **adapters(SQL, bucket_adapter))
    objects = stack_manifests(plan_of(cfg))
    server = next(o for o in objects if o["kind"] == "Deployment")
    (init,) = [c for c in server["spec"]["template"]["spec"]["initContainers"] if c["name"] == "lora-adapters"]
    assert "ADAPTERS" in {e["name"] for e in init["env"]}
    args = server["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"ops={HF_HOME}/lora-adapters/ops" in args


def test_the_preflight_charges_both_buffers_of_every_projection_per_adapter_slot() -> None:
    # Llama-3.1-8B, rank 16, one slot: per layer qkv 3x16x4096 + 16x6144, o 16x4096 + 4096x16,
    # gate_up 2x16x4096 + 16x28672, down 16x14336 + 4096x16 = 1,310,720 elements; 32 layers, 2 bytes.
    gib = lora_gib_per_gpu(MODELS["meta-llama/Llama-3.1-8B-Instruct"], LoraShape(1, 16), 1, 32, 2)
    assert gib == pytest.approx(1_310_720 * 32 * 2 / 1024**3)


def test_the_lora_buffers_come_out_of_the_kv_cache() -> None:
    plain = plan_of(make_config()).sizing.memory
    with_lora = plan_of(make_config(**adapters(SQL, CHAT))).sizing.memory
    assert with_lora.kv_cache_gib_per_gpu == pytest.approx(plain.kv_cache_gib_per_gpu - with_lora.lora_gib_per_gpu)
    assert with_lora.lora_gib_per_gpu > 0


def test_the_report_shows_the_lora_buffers_and_their_shape() -> None:
    report = plan_of(make_config(**adapters(SQL))).sizing.as_dict()
    assert report["memory"]["lora"]["max_lora_rank"] == 16


def test_a_rank_set_above_every_adapter_is_kept() -> None:
    assert lora_shape(LoraConfig.model_validate({"adapters": [SQL], "max_lora_rank": 64})) == LoraShape(1, 64)


def test_an_adapter_above_max_lora_rank_is_refused_naming_its_rank() -> None:
    assert issues_of(**adapters({**SQL, "rank": 32}, max_lora_rank=16)) == ["lora.adapters[0].rank"]


def test_a_max_lora_rank_vllm_does_not_accept_is_refused() -> None:
    assert issues_of(**adapters(SQL, max_lora_rank=24)) == ["lora.max_lora_rank"]


def report_issues(**changes: Any) -> list[str]:
    cfg = make_config(**changes)
    return [issue.key for issue in check_stack(cfg, plan_of(cfg))]


def test_an_adapter_targeting_a_module_the_model_has_no_lora_layer_for_is_refused() -> None:
    keys = report_issues(**adapters({**SQL, "target_modules": ["q_proj", "embed_tokens"]}))
    assert keys == ["lora.adapters[0].target_modules"]


def test_an_adapter_named_like_the_base_model_is_refused() -> None:
    assert issues_of(engine={"served_model_name": "sql"}, **adapters(SQL)) == ["lora.adapters[0].name"]


def test_two_adapters_with_one_name_are_refused_once() -> None:
    assert issues_of(**adapters(SQL, {**CHAT, "name": "sql"})) == ["lora.adapters[1].name"]


def test_a_hub_adapter_without_a_commit_is_refused() -> None:
    assert issues_of(**adapters({**SQL, "revision": None})) == ["lora.adapters[0]"]


def test_a_bucket_adapter_with_a_volume_delivery_is_refused_with_the_fix() -> None:
    bucket_adapter = {"name": "ops", "uri": "s3://models/adapters/ops/", "rank": 8, "target_modules": ["q_proj"]}
    assert issues_of(**adapters(bucket_adapter)) == ["lora.adapters[0].uri"]


def test_adapters_on_the_docker_target_are_refused() -> None:
    docker = {"target": "docker", "docker": {"host": "unix:///var/run/docker.sock"}}
    assert "lora.adapters" in issues_of(**docker, **adapters(SQL))


def test_max_cpu_loras_below_max_loras_is_refused() -> None:
    assert issues_of(**adapters(SQL, CHAT, max_cpu_loras=1)) == ["lora.max_cpu_loras"]


def test_lora_flags_in_extra_args_are_refused_naming_the_lora_key() -> None:
    assert report_issues(engine={"extra_args": ["--max-loras", "4"]}) == ["engine.extra_args"]


def test_the_hub_snapshot_path_follows_huggingface_hub_s_cache_layout() -> None:
    assert hub_snapshot("/c", "a/b", SHA) == f"/c/hub/models--a--b/snapshots/{SHA}"


# The prod variant with a router and two adapters (stacks/examples/Pulumi.prod-router-lora.yaml).
EXAMPLE = "prod-router-lora"


def test_the_prod_variant_serves_both_adapters_and_charges_their_buffers() -> None:
    plan = plan_of(example_stack(EXAMPLE))
    assert plan.lora is not None and plan.lora.names == ("llama-70b-sql", "llama-70b-support")
    assert plan.sizing.verdict.fits and plan.sizing.memory.lora_gib_per_gpu > 0


def test_in_the_prod_variant_only_the_router_reaches_the_server_s_api_port() -> None:
    plan = plan_of(example_stack(EXAMPLE))
    policies = render_network_policies(plan.identity, plan.traffic)
    namespace = plan.identity.namespace
    router = Pod("router", namespace, plan.identity.labels("router"), "10.1.0.50")
    server = Pod("server", namespace, plan.identity.labels("server"), "10.1.0.10")
    notebook = Pod("notebook", namespace, {"app": "notebook"}, "10.1.0.40")
    assert plan.routing is not None
    assert allowed(policies, router, server, plan.server.port)
    assert allowed(policies, notebook, router, plan.routing.port)
    assert not allowed(policies, notebook, server, plan.server.port)


def test_in_the_prod_variant_the_download_reaches_the_hub_and_the_servers_do_not() -> None:
    plan = plan_of(example_stack(EXAMPLE))
    policies = render_network_policies(plan.identity, plan.traffic)
    namespace = plan.identity.namespace
    hub = Host("huggingface.co", "18.239.50.1")
    download = Pod("download", namespace, plan.identity.labels("model-cache"), "10.1.0.30")
    server = Pod("server", namespace, plan.identity.labels("server"), "10.1.0.10")
    assert allowed(policies, download, hub, 443)
    assert not allowed(policies, server, hub, 443)


def test_keda_and_the_alerts_select_the_base_model_s_name_which_counts_its_adapters_requests() -> None:
    """vLLM labels every request series with the base's served name only (docs/lora.md), so the workload's
    selector stays the base's and no adapter name is needed in it."""
    plan = plan_of(make_config(engine={"served_model_name": "llama-8b"}, **adapters(SQL, CHAT)))
    assert plan.scaling.workload.vllm == '{namespace="' + plan.identity.namespace + '",model_name="llama-8b"}'


def test_max_cpu_loras_is_rendered_only_when_set() -> None:
    assert flag_value(list(args_of(**adapters(SQL, max_cpu_loras=4))), "--max-cpu-loras") == "4"
    assert "--max-cpu-loras" not in args_of(**adapters(SQL))


def test_runtime_loading_on_a_release_without_it_is_refused() -> None:
    assert issues_of(vllm={"version": "0.6.0"}, lora={"runtime_loading": True}) == ["lora.runtime_loading"]
