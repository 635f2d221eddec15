"""A replica across several nodes: preflight figures, config rules, the rendered LeaderWorkerSet and what follows it."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.vllm_flags import FLAG_TABLES, OWNED_FLAGS
from catalog.vllm_metrics import metrics_for
from cli.render import rendered_objects
from components.render.alerts import render_rule_groups
from components.render.keda import render_scaled_object
from config.errors import ConfigError
from plan.names import Names
from plan.scaling import Workload, capacity_of
from plan.sizing import resolve_sizing
from tests.factories import STACKS, example_stack, make_config
from tests.kubernetes_fixtures import INSTANCE, manifests, of_kind, one, plan_of, planned, stack_with
from tests.plan_parts import scaling_of
from tests.program import run_stack_file
from tests.promtool import crd_errors
from validation.vllm import canonical_flag

LWS_CRD = "leaderworkerset.x-k8s.io_leaderworkersets.yaml"
EXAMPLE = "llama-405b-on-2x8-a100-80gb"
LLAMA_405B = {"id": "meta-llama/Llama-3.1-405B-Instruct"}


RWX = {"storage_class_name": "efs-sc"}  # a group's nodes share one ReadWriteMany copy


def two_node_405b(product: str = "A100-SXM4-80GB", **engine: Any) -> Any:
    return make_config(
        model=LLAMA_405B,
        gpu={"product": product},
        cache=RWX,
        engine={
            "tensor_parallel_size": 8,
            "pipeline_parallel_size": 2,
            "nnodes": 2,
            "max_model_len": 8192,
            "max_num_seqs": 64,
            **engine,
        },
    )


def example_objects() -> list[dict[str, Any]]:
    return manifests(*planned(example_stack(EXAMPLE)))


def lws() -> dict[str, Any]:
    return one(example_objects(), "LeaderWorkerSet")


def leader() -> dict[str, Any]:
    return lws()["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]


def worker() -> dict[str, Any]:
    return lws()["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


# --- the preflight plans across nodes ---------------------------------------------------------------------


def test_405b_bf16_on_two_a100_80gb_nodes_fits_with_47_gib_of_weights_per_gpu() -> None:
    report = resolve_sizing(example_stack(EXAMPLE))
    assert report.verdict.fits
    assert report.memory.weights_gib_per_gpu == pytest.approx(47.248, abs=0.001)  # 755.96 GiB / 16 GPUs


def test_405b_on_two_a100_80gb_nodes_leaves_20_gib_of_kv_cache_per_gpu() -> None:
    report = resolve_sizing(example_stack(EXAMPLE))
    # 71.235 requested - 47.248 weights - 0.170 activation (FlashInfer sampler) - 2.17 non-torch - 0.613 CUDA graphs.
    assert report.memory.kv_cache_gib_per_gpu == pytest.approx(21.035, abs=0.001)
    assert report.memory.per_token_kv_bytes == 63 * 2 * 1 * 128 * 2  # 63 layers per stage, one KV head per GPU, bf16
    assert report.capacity.kv_cache_tokens == 700_208


def test_405b_on_two_h100_nodes_fits_with_693_thousand_tokens() -> None:
    report = resolve_sizing(two_node_405b("H100-80GB-HBM3"))
    assert report.verdict.fits
    assert (report.memory.weights_gib_per_gpu, report.memory.kv_cache_gib_per_gpu) == pytest.approx((47.248, 20.825), abs=0.001)
    assert report.capacity.kv_cache_tokens == 693_232


def test_405b_on_a100_40gb_needs_three_nodes_and_fits_there() -> None:
    engine = {"max_model_len": 4096, "max_num_seqs": 8, "gpu_memory_utilization": 0.95}
    three = resolve_sizing(two_node_405b("A100-SXM4-40GB", pipeline_parallel_size=3, nnodes=3, **engine))
    two = resolve_sizing(two_node_405b("A100-SXM4-40GB", **engine))
    assert three.verdict.fits and three.memory.weights_gib_per_gpu == pytest.approx(31.661, abs=0.001)
    assert not two.verdict.fits


def test_the_blocked_single_node_405b_stack_suggests_the_two_node_layout() -> None:
    report = resolve_sizing(example_stack("blocked-llama-405b-on-one-a100-node"))
    assert not report.verdict.fits
    assert {"engine": {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2}} in report.verdict.suggested_changes


def test_the_multinode_suggestion_fits_when_applied() -> None:
    report = resolve_sizing(example_stack("blocked-llama-405b-on-one-a100-node"))
    changes = next(c for c in report.verdict.suggested_changes if "nnodes" in c.get("engine", {}))
    applied = make_config(
        model=LLAMA_405B,
        gpu={"product": "A100-SXM4-80GB"},
        cache=RWX,
        engine={"max_model_len": 8192, "max_num_seqs": 64, **changes["engine"]},
    )
    assert resolve_sizing(applied).verdict.fits


def test_the_report_names_the_nodes_of_a_replica() -> None:
    from preflight.text import table_text as render_table

    assert "(TP 8, PP 2) on 2 nodes x 8 GPUs" in render_table(resolve_sizing(example_stack(EXAMPLE)))


def test_nnodes_that_does_not_divide_the_gpus_blocks() -> None:
    report = resolve_sizing(two_node_405b(nnodes=3))
    assert any("engine.nnodes (3) does not divide the 16 GPUs" in reason for reason in report.verdict.reasons)


def test_more_gpus_per_node_than_a_node_has_blocks_naming_the_nodes_needed() -> None:
    report = resolve_sizing(two_node_405b(pipeline_parallel_size=4))
    assert any(
        "each of the 2 nodes of a replica needs 16 GPUs" in r and "raise engine.nnodes to 4" in r
        for r in report.verdict.reasons
    )


# --- config rules ------------------------------------------------------------------------------------------


def config_issue_keys(**changes: Any) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        make_config(model=LLAMA_405B, **{"cache": RWX, **changes})
    return [issue.key for issue in caught.value.issues]


def test_a_release_without_native_multinode_is_refused_naming_engine_nnodes() -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(engine={"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2}, vllm={"version": "0.7.2"})
    issue = next(i for i in caught.value.issues if i.key == "engine.nnodes")
    assert "vLLM 0.7.2 has no native multi-node mode" in issue.message and "Ray" in issue.message


def test_multinode_on_the_docker_target_is_refused() -> None:
    keys = config_issue_keys(
        engine={"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2}, target="docker", docker={"gpus": "all"}
    )
    assert "engine.nnodes" in keys


def test_a_pod_monitor_is_refused_with_several_nodes_per_replica() -> None:
    keys = config_issue_keys(
        engine={"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2}, monitoring={"monitor_kind": "PodMonitor"}
    )
    assert keys == ["monitoring.monitor_kind"]


def test_a_read_write_once_cache_is_refused_with_several_nodes_per_replica() -> None:
    keys = config_issue_keys(
        engine={"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2}, cache={"access_mode": "ReadWriteOnce"}
    )
    assert keys == ["cache.access_mode"]


def test_per_replica_volumes_are_refused_with_several_nodes_per_replica() -> None:
    keys = config_issue_keys(
        engine={"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2},
        cache={},
        delivery={"mode": "per_replica_volume"},
    )
    assert keys == ["delivery.mode"]


def test_a_multinode_stack_shares_one_read_write_many_copy_by_default() -> None:
    delivery = plan_of(two_node_405b()).delivery
    assert delivery.mode == "shared_volume"
    assert delivery.volume is not None and delivery.volume.access_mode == "ReadWriteMany"


@pytest.mark.parametrize(
    "token", ["--nnodes=2", "--node_rank=1", "-n", "--master-addr", "--headless", "--distributed-executor-backend=ray"]
)
def test_every_spelling_of_a_multinode_flag_in_extra_args_is_refused(token: str) -> None:
    assert canonical_flag(token) in OWNED_FLAGS


@pytest.mark.parametrize("value", ["a\nb", "$(HOME)"])
def test_an_nccl_value_with_a_newline_or_variable_reference_is_refused(value: str) -> None:
    assert config_issue_keys(multinode={"nccl_env": {"NCCL_IB_HCA": value}}) == ["multinode.nccl_env"]


def test_a_non_collective_variable_in_nccl_env_is_refused() -> None:
    assert config_issue_keys(multinode={"nccl_env": {"LD_PRELOAD": "x"}}) == ["multinode.nccl_env"]


def test_the_gpu_resource_cannot_be_given_as_an_rdma_resource() -> None:
    assert config_issue_keys(multinode={"rdma_resources": {"nvidia.com/gpu": 8}}) == ["multinode.rdma_resources"]


# --- the rendered LeaderWorkerSet -------------------------------------------------------------------------


def test_the_rendered_leaderworkerset_is_valid_against_the_upstream_crd() -> None:
    assert crd_errors(lws(), LWS_CRD) == []


def test_a_multinode_stack_renders_no_deployment() -> None:
    assert of_kind(example_objects(), "Deployment") == []


def test_a_group_has_one_pod_per_node_and_restarts_as_one() -> None:
    spec = lws()["spec"]
    assert spec["leaderWorkerTemplate"]["size"] == 2
    assert spec["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert spec["startupPolicy"] == "LeaderCreated"


def test_the_leader_runs_rank_zero_with_the_native_mp_flags() -> None:
    args = leader()["args"]
    assert args[-10:] == [
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--master-addr",
        "$(LWS_LEADER_ADDRESS)",
        "--master-port",
        "29501",
    ]
    assert "--headless" not in args


def test_a_worker_runs_its_own_rank_headless() -> None:
    args = worker()["args"]
    assert flag(args, "--node-rank") == "$(LWS_WORKER_INDEX)"
    assert args[-1] == "--headless"


def test_leader_and_worker_serve_the_same_model_with_the_same_parallelism() -> None:
    lead, work = leader()["args"], worker()["args"]
    for name in ("--tensor-parallel-size", "--pipeline-parallel-size", "--served-model-name", "--max-model-len"):
        assert flag(lead, name) == flag(work, name)
    assert lead[0] == work[0] == "meta-llama/Llama-3.1-405B-Instruct"


@pytest.mark.parametrize("container", [leader, worker])
def test_every_rendered_flag_is_in_the_flag_table_of_the_release(container: Any) -> None:
    flags = {canonical_flag(token) for token in container()["args"]} - {None}
    assert flags <= FLAG_TABLES["0.33.0"].flags | OWNED_FLAGS
    assert {"--nnodes", "--node-rank", "--master-addr", "--master-port"} <= FLAG_TABLES["0.33.0"].flags


def test_only_the_leader_has_probes_and_the_http_port() -> None:
    assert {"startupProbe", "readinessProbe", "livenessProbe", "ports"} <= set(leader())
    assert not {"startupProbe", "readinessProbe", "livenessProbe", "ports"} & set(worker())


@pytest.mark.parametrize("container", [leader, worker])
def test_each_pod_requests_the_gpus_of_one_node_and_the_rdma_device(container: Any) -> None:
    resources = container()["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == resources["requests"]["nvidia.com/gpu"] == "8"
    assert resources["limits"]["rdma/ib"] == resources["requests"]["rdma/ib"] == "1"


@pytest.mark.parametrize("container", [leader, worker])
def test_rdma_adds_ipc_lock_and_the_nccl_settings(container: Any) -> None:
    assert container()["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["IPC_LOCK"]}
    assert {"name": "NCCL_IB_HCA", "value": "mlx5"} in container()["env"]


@pytest.mark.parametrize("container", [leader, worker])
def test_a_rank_that_adds_ipc_lock_runs_as_uid_0_so_the_capability_is_effective(container: Any) -> None:
    # capabilities(7): execve clears a non-root UID's permitted and effective sets; Kubernetes sets no ambient ones.
    context = container()["securityContext"]
    assert (context["runAsUser"], context["runAsNonRoot"], context["allowPrivilegeEscalation"]) == (0, False, False)


def test_without_rdma_no_capability_is_added_and_the_namespace_stays_restricted() -> None:
    objects = manifests(*planned(two_node_405b()))
    container = one(objects, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["runAsNonRoot"] is True and "runAsUser" not in container["securityContext"]
    assert one(objects, "Namespace")["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_ipc_lock_makes_the_created_namespace_privileged() -> None:
    labels = one(example_objects(), "Namespace")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"


def test_the_ranks_of_a_group_must_land_on_distinct_nodes() -> None:
    template = lws()["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    term = template["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["matchLabelKeys"] == ["leaderworkerset.sigs.k8s.io/group-key"]
    assert term["topologyKey"] == "kubernetes.io/hostname"


def test_the_gpu_node_affinity_of_the_single_node_pod_is_kept() -> None:
    template = lws()["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert "nodeAffinity" in template["spec"]["affinity"]


def test_an_exclusive_topology_is_an_annotation_on_the_leaderworkerset() -> None:
    cfg = two_node_405b().model_copy(
        update={"multinode": make_config(multinode={"exclusive_topology": "cloud.google.com/gce-topology-block"}).multinode}
    )
    annotations = one(manifests(*planned(cfg)), "LeaderWorkerSet")["metadata"]["annotations"]
    assert annotations["leaderworkerset.sigs.k8s.io/exclusive-topology"] == "cloud.google.com/gce-topology-block"


def test_pulumi_waits_for_every_group_to_be_ready_without_autoscaling() -> None:
    annotations = one(manifests(*planned(two_node_405b())), "LeaderWorkerSet")["metadata"]["annotations"]
    assert annotations["pulumi.com/waitFor"] == "jsonpath={.status.readyReplicas}=1"


def test_the_service_selects_the_leaders_only() -> None:
    selector = one(example_objects(), "Service")["spec"]["selector"]
    assert selector["leaderworkerset.sigs.k8s.io/worker-index"] == "0"


# LWS labels each pod of a group with its worker index ("0": the leader) and the group's key
# (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go@024af084:29-75).
LWS_WORKER_INDEX, LWS_GROUP_KEY = "leaderworkerset.sigs.k8s.io/worker-index", "leaderworkerset.sigs.k8s.io/group-key"
POOL_GATEWAY = {
    "name": "inference-gateway",
    "namespace": "gateway-system",
    "hostnames": ["llm.example.com"],
    "backend": "InferencePool",
    "endpoint_picker": {"service": "llama-epp"},
}


def group_pods(group: dict[str, Any]) -> dict[int, tuple[dict[str, str], dict[str, Any]]]:
    """The labels the leader (index 0) and a worker (index 1) of one group carry once LWS created them, with
    each one's vLLM container."""
    template = group["spec"]["leaderWorkerTemplate"]
    pods = {}
    for index, key in ((0, "leaderTemplate"), (1, "workerTemplate")):
        labels = {**template[key]["metadata"]["labels"], LWS_WORKER_INDEX: str(index), LWS_GROUP_KEY: "3f2a"}
        pods[index] = (labels, template[key]["spec"]["containers"][0])
    return pods


def test_an_inference_pool_over_groups_admits_only_the_pods_that_serve_its_port() -> None:
    # GIE's endpoint picker adds every Ready pod the pool's selector matches
    # (kubernetes-sigs/gateway-api-inference-extension pkg/epp/controller/pod_reconciler.go@60c5ab8f:79-90), and
    # a container without a readiness probe is Ready once started (kubernetes/api core/v1/types.go@3fed8b5a,
    # ContainerStatus.Ready): a headless worker the selector matches is picked, and refuses the connection.
    cfg, _ = stack_with(EXAMPLE, exposure={"gateway": POOL_GATEWAY}, security={"require_api_key": True})
    objects = rendered_objects(plan_of(cfg))
    pool = one(objects, "InferencePool")["spec"]
    port, selector = pool["targetPorts"][0]["number"], pool["selector"]["matchLabels"]
    pods = group_pods(one(objects, "LeaderWorkerSet"))
    picked = {index for index, (labels, _) in pods.items() if selector.items() <= labels.items()}
    serving = {index for index, (_, vllm) in pods.items() if port in {p["containerPort"] for p in vllm.get("ports", [])}}
    assert picked == serving == {0}


def test_the_leaderworkerset_name_differs_from_the_service_it_would_collide_with() -> None:
    service = one(example_objects(), "Service")["metadata"]["name"]
    assert lws()["metadata"]["name"] == Names(INSTANCE).group != service


def test_the_startup_budget_adds_the_group_join_time() -> None:
    single = make_config(model=LLAMA_405B, engine={"tensor_parallel_size": 8}, gpu={"product": "H200"}, cache=RWX)
    # The same GPUs per pod (8): the group adds multinode.group_init_seconds (120 s) to the engine start.
    multi, one_node = (plan_of(cfg).delivery.budget.probe for cfg in (two_node_405b("H200"), single))
    assert multi.engine_start_seconds - one_node.engine_start_seconds == pytest.approx(120)


# --- KEDA and monitoring follow the group -----------------------------------------------------------------


def lws_workload() -> Workload:
    return Workload(
        namespace="vllm",
        model_name="llama-405b",
        deployment_name=Names(INSTANCE).group,
        hpa_name="keda-hpa-x",
        kind="LeaderWorkerSet",
    )


def test_keda_scales_the_leaderworkerset_through_its_scale_subresource() -> None:
    cfg, report = planned(example_stack(EXAMPLE))
    scaling = scaling_of(
        cfg.autoscaling, capacity_of(report), lws_workload(), "http://prometheus.monitoring.svc:9090", name="x", labels={}
    )
    scaled = render_scaled_object(scaling)
    assert scaled["spec"]["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": "llama-group",
    }
    assert crd_errors(scaled, "keda.sh_scaledobjects.yaml") == []


def test_the_not_ready_alert_counts_groups_by_the_leader_statefulset() -> None:
    wanted, available, owner = lws_workload().replica_series()
    assert wanted == 'kube_statefulset_replicas{namespace="vllm",statefulset="llama-group"}'
    assert available == 'kube_statefulset_status_replicas_ready{namespace="vllm",statefulset="llama-group"}'
    assert owner == "statefulset"


def test_pod_series_match_leader_and_worker_pod_names() -> None:
    import re

    pattern = re.compile(lws_workload().pod_regex)
    assert all(pattern.fullmatch(name) for name in ("llama-group-0", "llama-group-1-1"))
    assert not pattern.fullmatch("llama-group-abc12-xyz")


# --- the program under mocks ------------------------------------------------------------------------------


def test_the_program_registers_a_leaderworkerset_and_no_deployment() -> None:
    registered, error = run_stack_file(STACKS / "examples" / f"Pulumi.{EXAMPLE}.yaml")
    assert error is None
    group = registered.one("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")
    assert group["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert registered.of_type("kubernetes:apps/v1:Deployment") == []


def test_the_program_points_keda_at_the_leaderworkerset() -> None:
    registered, _ = run_stack_file(STACKS / "examples" / f"Pulumi.{EXAMPLE}.yaml")
    scaled = registered.one("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert scaled["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"


def test_the_rules_for_a_leaderworkerset_pass_promtool(tmp_path: Any) -> None:
    from config.observability import MonitoringConfig
    from plan.monitoring import AlertThresholds
    from tests.promtool import check_rules, write_yaml

    limits = AlertThresholds(queue_per_replica=26.0, gpu_memory_used_fraction=0.95, rollout_seconds=900)
    groups = render_rule_groups(MonitoringConfig(), limits, metrics_for("0.33.0"), lws_workload())
    result = check_rules(write_yaml(tmp_path / "rules.yaml", {"groups": groups}))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kube_statefulset_status_replicas_ready" in str(groups)


# --- the plan holds the ranks' flags once ------------------------------------------------------------------


def test_one_node_per_replica_has_no_multinode_plan() -> None:
    assert plan_of(make_config()).multinode is None


def test_the_worker_containers_run_the_plans_worker_flags_after_the_shared_args() -> None:
    plan = plan_of(example_stack(EXAMPLE), INSTANCE)
    assert plan.multinode is not None
    assert worker()["args"][-len(plan.multinode.worker_flags) :] == list(plan.multinode.worker_flags)


def test_a_worker_rank_is_headless_and_reads_its_index_from_lws() -> None:
    multinode = plan_of(example_stack(EXAMPLE)).multinode
    assert multinode is not None
    rank = flag(list(multinode.worker_flags), "--node-rank")
    assert (multinode.worker_flags[-1], rank) == ("--headless", "$(LWS_WORKER_INDEX)")
