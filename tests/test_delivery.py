"""Model delivery modes: the objects each renders, the effective volume, the budget term by term, revisions,
and the page-cache warning (plan/delivery.py, preflight/delivery.py, components/render/delivery.py)."""

from __future__ import annotations

import pytest

from config.delivery import CacheVolume
from config.errors import ConfigError
from config.stack import StackConfig
from plan.delivery import DeliveryPlan
from tests.factories import REPO, make_config
from tests.kubernetes_fixtures import (
    SET_FIXED_TERMS,
    configured,
    env_of,
    manifests,
    model_cache_job,
    model_cache_jobs,
    of_kind,
    one,
    plan_of,
    pod_spec,
    server,
    stack,
    stack_with,
)
from tests.program import run_stack_file
from tests.test_determinism import SHIPPED, instance_name, render_stack

PER_REPLICA = {"mode": "per_replica_volume"}
BUCKET = {
    "mode": "object_storage",
    "object_storage": {"uri": "s3://models/llama-70b/", "credentials_secret": "keys", "endpoint_url": "http://minio:9000"},
}


def delivery_of(cfg: StackConfig) -> DeliveryPlan:
    return plan_of(cfg).delivery


def run_prod(**groups: object):  # type: ignore[no-untyped-def]
    """The whole program under mocks on the prod stack file, with whole groups replaced."""
    return run_stack_file(REPO / "stacks" / "Pulumi.prod.yaml", extra={"api_key": "sk-test", **groups})


def per_replica_prod():  # type: ignore[no-untyped-def]
    return stack_with("prod-on-efs", delivery=PER_REPLICA, cache={"storage_class_name": None})


def test_dev_stack_renders_a_read_write_once_claim():
    assert one(manifests(*stack("dev")), "PersistentVolumeClaim")["spec"]["accessModes"] == ["ReadWriteOnce"]


def test_several_replicas_without_a_storage_class_default_to_per_replica_claims():
    cfg, _ = configured(replicas=2)
    assert delivery_of(cfg).volume == CacheVolume("ReadWriteOnce", None)


def test_a_shared_volume_for_several_replicas_needs_a_storage_class():
    with pytest.raises(ConfigError) as error:
        make_config(replicas=2, delivery={"mode": "shared_volume"})
    assert [i.key for i in error.value.issues] == ["cache.storage_class_name"]


def test_a_shared_volume_with_a_class_is_read_write_many():
    cfg, _ = configured(replicas=2, cache={"storage_class_name": "efs-sc"})
    assert delivery_of(cfg).volume == CacheVolume("ReadWriteMany", "efs-sc")


def test_object_storage_has_no_cache_volume():
    assert delivery_of(configured(**{"delivery": BUCKET})[0]).volume is None


def test_per_replica_volumes_render_a_stateful_set_with_one_claim_template():
    objects = manifests(*per_replica_prod())
    template = one(objects, "StatefulSet")["spec"]["volumeClaimTemplates"][0]
    assert (template["metadata"]["name"], template["spec"]["accessModes"]) == ("model-cache", ["ReadWriteOnce"])
    assert (of_kind(objects, "PersistentVolumeClaim"), model_cache_jobs(objects), of_kind(objects, "Deployment")) == (
        [],
        [],
        [],
    )


def test_per_replica_claims_are_kept_when_the_set_scales_down():
    spec = one(manifests(*per_replica_prod()), "StatefulSet")["spec"]
    assert spec["persistentVolumeClaimRetentionPolicy"]["whenScaled"] == "Retain"


def test_per_replica_claims_outlive_a_replaced_stateful_set_so_a_model_change_keeps_every_cache():
    spec = one(manifests(*per_replica_prod()), "StatefulSet")["spec"]
    assert spec["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Retain"


def test_an_autoscaled_stateful_set_is_created_with_the_autoscalers_minimum():
    spec = one(manifests(*per_replica_prod()), "StatefulSet")["spec"]
    assert spec["replicas"] == 2


def test_per_replica_download_runs_as_an_init_container_that_frees_old_revisions():
    init = pod_spec(manifests(*per_replica_prod()))["initContainers"]
    assert [c["name"] for c in init] == ["download"]
    assert env_of(init[0])["PRUNE_OTHER_REVISIONS"] == "1"


def test_per_replica_volumes_keep_the_compile_caches_on_the_claim():
    env = env_of(server(manifests(*per_replica_prod())))
    assert env["VLLM_CACHE_ROOT"] == "/home/vllm/.cache/huggingface/compile-cache/vllm"


def test_a_shared_read_write_many_volume_keeps_compile_caches_per_pod():
    assert env_of(server(manifests(*stack("prod-on-efs"))))["VLLM_CACHE_ROOT"] == "/home/vllm/.cache/vllm"


def test_object_storage_streams_the_bucket_with_the_run_ai_loader():
    args = server(manifests(*stack_with("prod-on-efs", delivery=BUCKET)))["args"]
    assert args[0] == "s3://models/llama-70b/"
    assert args[args.index("--load-format") + 1] == "runai_streamer"


def test_object_storage_holds_every_ranks_streamer_buffers_to_a_quarter_of_the_memory_limit():
    args = server(manifests(*stack_with("prod-on-efs", delivery=BUCKET)))["args"]
    # 72 GiB / 4, shared by the pod's 4 ranks (TP 4): 4.5 GiB each
    assert args[args.index("--model-loader-extra-config") + 1] == '{"memory_limit":4831838208}'


def test_read_write_many_without_a_storage_class_is_refused_even_for_one_replica():
    with pytest.raises(ConfigError) as error:
        make_config(cache={"access_mode": "ReadWriteMany"})
    assert [i.key for i in error.value.issues] == ["cache.storage_class_name"]


def test_object_storage_reads_credentials_from_the_secret_and_the_endpoint_from_config():
    container = server(manifests(*stack_with("prod-on-efs", delivery=BUCKET)))
    assert container["envFrom"] == [{"secretRef": {"name": "keys"}}]
    assert env_of(container)["AWS_ENDPOINT_URL"] == "http://minio:9000"


def test_object_storage_sends_the_streamers_own_log_to_the_pod_log():
    container = server(manifests(*stack_with("prod-on-efs", delivery=BUCKET)))
    assert env_of(container)["RUNAI_STREAMER_LOG_TO_STDERR"] == "1"


def test_a_volume_mode_sets_no_streamer_log_flag():
    assert "RUNAI_STREAMER_LOG_TO_STDERR" not in env_of(server(manifests(*stack_with("prod-on-efs"))))


def test_object_storage_puts_workload_identity_on_the_server_service_account():
    bucket = {
        "mode": "object_storage",
        "object_storage": {
            "uri": "gs://models/llama/",
            "service_account_annotations": {"iam.gke.io/gcp-service-account": "m@p.iam"},
        },
    }
    accounts = of_kind(manifests(*stack_with("prod-on-efs", delivery=bucket)), "ServiceAccount")
    annotations = {a["metadata"]["name"]: a["metadata"].get("annotations") for a in accounts}
    assert annotations == {"llama-server": {"iam.gke.io/gcp-service-account": "m@p.iam"}, "llama-rolled-out": None}


def test_object_storage_renders_no_claim_and_no_download():
    objects = manifests(*stack_with("prod-on-efs", delivery=BUCKET))
    assert (of_kind(objects, "PersistentVolumeClaim"), model_cache_jobs(objects)) == ([], [])
    assert "initContainers" not in pod_spec(objects)


def test_object_storage_is_refused_on_vllm_0_7_2():
    with pytest.raises(ConfigError) as error:
        make_config(vllm={"version": "0.7.2"}, delivery=BUCKET)
    assert [i.key for i in error.value.issues] == ["vllm.version"]


def test_object_storage_without_a_bucket_is_refused():
    with pytest.raises(ConfigError) as error:
        make_config(delivery={"mode": "object_storage"})
    assert [i.key for i in error.value.issues] == ["delivery.object_storage"]


def test_a_70b_on_a_shared_volume_at_150_mib_per_s_budgets_reading_131_gib():
    cfg, _ = stack_with("prod-on-efs", probes={"load_throughput_gib_per_s": 150 / 1024})
    budget = delivery_of(cfg).budget
    assert budget.probe.load_seconds == pytest.approx(131.42 * 1024 / 150, abs=1)  # 897 s
    assert budget.probe.total_seconds >= budget.probe.load_seconds + 105 + 120


def test_budget_terms_are_image_pull_download_load_engine_start_and_compile():
    cfg, _ = stack_with("prod-on-efs", probes=SET_FIXED_TERMS)
    terms = {t.name: round(t.seconds) for t in delivery_of(cfg).budget.terms}
    # 242 s (11.77 GiB at 50 MiB/s); 131.42 GiB / 0.1 GiB/s; 131.42 GiB / 25 MiB/s (EFS's 100 shared by the 4
    # replicas prod can run); 60 + 3 x 15 s; 120 s
    assert terms == {"image pull": 242, "download": 1314, "load": 5383, "engine start": 105, "compile + graphs": 120}


def test_first_start_is_pull_plus_download_plus_the_probe_budget():
    cfg, _ = stack_with("prod-on-efs", probes=SET_FIXED_TERMS)
    budget = delivery_of(cfg).budget
    assert budget.first_start_seconds == 242 + 1972 + 8420  # download x 1.5; (5383 + 105 + 120) x 1.5 -> 8420


def test_object_storage_has_no_download_term_and_reads_at_its_default():
    cfg, _ = stack_with("prod-on-efs", delivery=BUCKET)
    budget = delivery_of(cfg).budget
    assert (budget.download_seconds, budget.throughput.mib_per_s) == (0.0, 1024.0)


def test_a_measured_throughput_wins_over_the_mode_default():
    cfg, _ = stack_with("prod-on-efs", probes={"load_throughput_gib_per_s": 2.0})
    assert delivery_of(cfg).budget.throughput.source.startswith("measured")


def test_the_workload_carries_the_budget_term_by_term():
    annotations = one(manifests(*stack_with("prod-on-efs", probes=SET_FIXED_TERMS)), "Deployment")["metadata"]["annotations"]
    assert annotations["vllm-serving.io/startup-budget"].startswith(
        "10634 s first start = 242 s image pull + 1314 s download x 1.5 + 8420 s startup probe"
    )


def test_the_report_shows_the_plans_delivery_budget_and_its_page_cache_warning():
    plan = plan_of(stack("prod-on-efs")[0])
    assert plan.sizing.startup is plan.delivery.budget
    assert plan.delivery.warnings and plan.sizing.verdict.warnings[-len(plan.delivery.warnings) :] == plan.delivery.warnings


def test_the_preflight_report_lists_the_budget_terms():
    from preflight.text import table_text as render_table

    table = render_table(stack("prod-on-efs")[1])
    assert "  load" in table and "5383 s (131.4 GiB / 25 MiB/s)" in table


def test_a_new_revision_gets_a_new_claim_sized_for_it():
    first = one(manifests(*stack_with("prod-on-efs", model={"revision": "aaaa111"})), "PersistentVolumeClaim")
    second = one(manifests(*stack_with("prod-on-efs", model={"revision": "bbbb222"})), "PersistentVolumeClaim")
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert second["spec"]["resources"]["requests"]["storage"] == "166Gi"  # 131.4 GiB x 1.25 + 1


def test_prod_memory_limit_below_the_checkpoint_warns_with_the_numbers():
    warnings = stack("prod-on-efs")[1].verdict.warnings
    # 131.4 GiB / 0.9 = 146.0 GiB; the 72 GiB limit holds 8 GiB of /dev/shm, so server.memory_gib >= 139
    assert any("memory limit (72 GiB)" in w and "146.0 GiB" in w and "at least 139" in w for w in warnings)


def test_enough_memory_for_the_page_cache_does_not_warn():
    report = stack_with("prod-on-efs", server={"memory_gib": 150})[1]
    assert not any("memory limit" in w for w in report.verdict.warnings)


def test_per_replica_block_disks_do_not_warn_about_the_page_cache():
    assert not any("memory limit" in w for w in per_replica_prod()[1].verdict.warnings)


def test_prod_set_to_per_replica_volumes_by_one_key_registers_a_stateful_set_that_keda_scales():
    registered, error = run_prod(delivery={"mode": "per_replica_volume"}, cache={})
    assert error is None
    statefulset = registered.one("kubernetes:apps/v1:StatefulSet")
    scaled = registered.one("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert scaled["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": statefulset["metadata"]["name"],
    }
    assert registered.of_type("kubernetes:apps/v1:Deployment") == []


def test_prod_set_to_object_storage_by_one_key_registers_no_claim():
    registered, error = run_prod(delivery=BUCKET, cache={})
    assert error is None
    assert registered.of_type("kubernetes:core/v1:PersistentVolumeClaim") == []
    args = registered.one("kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:1] == ["s3://models/llama-70b/"] and "runai_streamer" in args


def test_server_pods_that_fetch_weights_themselves_may_reach_the_hub():
    from config.network import NetworkPolicyConfig
    from tests.plan_parts import server_policy_of as render_server_policy

    fetching = render_server_policy("ns", "prod", 8000, NetworkPolicyConfig(), fetches_weights=True)
    serving = render_server_policy("ns", "prod", 8000, NetworkPolicyConfig())
    assert len(fetching["spec"]["egress"]) == 2 and len(serving["spec"]["egress"]) == 1


def test_a_docker_container_keeps_its_compile_caches_on_the_cache_volume():
    from components.render.docker import render_env
    from tests.kubernetes_fixtures import plan_of

    cfg, _ = stack("docker-8b")
    assert render_env(plan_of(cfg).server)["VLLM_CACHE_ROOT"] == "/home/vllm/.cache/huggingface/compile-cache/vllm"


WRITER = "arn:aws:iam::1:role/writer"
COPYING = {
    "mode": "object_storage",
    "object_storage": {
        "uri": "s3://models/llama-70b",
        "copy_from_hub": True,
        "service_account_annotations": {"eks.amazonaws.com/role-arn": WRITER},
    },
}


def copying_prod(revision: str = "aaaa111"):  # type: ignore[no-untyped-def]
    return stack_with("prod-on-efs", delivery=COPYING, model={"revision": revision})


def test_copy_from_hub_renders_one_job_that_uploads_to_the_revision_folder():
    objects = manifests(*copying_prod())
    container = model_cache_job(objects)["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], env_of(container)["TARGET"]) == ("copy", "s3://models/llama-70b/aaaa111/")
    assert of_kind(objects, "PersistentVolumeClaim") == []


def test_the_server_streams_the_folder_the_copy_job_fills():
    assert server(manifests(*copying_prod()))["args"][0] == "s3://models/llama-70b/aaaa111/"


def test_a_new_revision_is_copied_to_a_new_folder_by_a_new_job():
    first, second = (model_cache_job(manifests(*copying_prod(rev))) for rev in ("aaaa111", "bbbb222"))
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert env_of(second["spec"]["template"]["spec"]["containers"][0])["TARGET"].endswith("/bbbb222/")


def test_copy_from_hub_needs_a_pinned_revision():
    with pytest.raises(ConfigError) as error:
        make_config(delivery=COPYING)
    assert [i.key for i in error.value.issues] == ["model.revision"]


def test_the_copy_job_writes_with_the_workload_identity_of_the_servers_service_account():
    objects = manifests(*copying_prod())
    accounts = {a["metadata"]["name"]: a["metadata"].get("annotations") for a in of_kind(objects, "ServiceAccount")}
    runs_as = model_cache_job(objects)["spec"]["template"]["spec"]["serviceAccountName"]
    identities = {"llama-server": {"eks.amazonaws.com/role-arn": WRITER}, "llama-rolled-out": None}
    assert (runs_as, accounts) == ("llama-server", identities)


def test_copy_from_hub_is_refused_for_a_gs_bucket():
    bucket = {
        "mode": "object_storage",
        "object_storage": {"uri": "gs://models/llama", "copy_from_hub": True, "workload_identity": "gke-workload-identity"},
    }
    with pytest.raises(ConfigError) as error:
        make_config(delivery=bucket, model={"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "aaaa111"})
    assert [i.key for i in error.value.issues] == ["delivery.object_storage.copy_from_hub"]


def test_object_storage_refuses_a_draft_model_it_could_not_load():
    draft = {"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3}
    with pytest.raises(ConfigError) as error:
        make_config(delivery=BUCKET, engine={"max_model_len": 8192, "speculative": draft})
    assert [i.key for i in error.value.issues] == ["engine.speculative.model"]


def test_the_server_waits_for_the_copy_job_which_is_awaited_to_its_deadline():
    from tests.kubernetes_fixtures import run_recording
    from tests.test_serving_stack import build_stack

    _, requests = run_recording(
        build_stack(
            *stack_with("prod-on-efs", delivery=COPYING, cache={"storage_class_name": None}, model={"revision": "aaaa111"})
        )
    )
    assert any(d.endswith("::llama-cache-copy") for d in requests["llama-server-deployment"].dependencies)
    # 131.4 GiB fetched and uploaded at 0.1 GiB/s x 1.5 (3942 s) + 242 s pull + 120 s = 4304 s
    assert requests["llama-cache-copy"].timeouts == {"create": "72m", "update": "72m"}


def test_a_stateful_set_is_watched_with_its_own_kube_state_metrics_series():
    registered, error = run_prod(delivery={"mode": "per_replica_volume"}, cache={})
    assert error is None
    rules = registered.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule")["spec"]["groups"]
    expr = next(r["expr"] for g in rules for r in g["rules"] if r.get("alert") == "VllmReplicasNotReady")
    assert expr == (
        'kube_statefulset_replicas{namespace="vllm-prod",statefulset="vllm-prod-server"} > on (namespace, '
        'statefulset) kube_statefulset_status_replicas_ready{namespace="vllm-prod",statefulset="vllm-prod-server"}'
    )


def test_stateful_set_pods_are_matched_by_their_ordinal():
    from plan.scaling import Workload

    assert Workload("vllm", "m", "llama-server", kind="StatefulSet").pod_regex == "llama-server-[0-9]+"


def claim_specs(objects: list[dict]) -> list[dict]:
    specs = [o["spec"] for o in of_kind(objects, "PersistentVolumeClaim")]
    return specs + [t["spec"] for o in of_kind(objects, "StatefulSet") for t in o["spec"]["volumeClaimTemplates"]]


@pytest.mark.parametrize("path", SHIPPED, ids=[instance_name(p) for p in SHIPPED])
def test_no_shipped_stack_renders_read_write_many_without_a_storage_class(path):  # type: ignore[no-untyped-def]
    specs = claim_specs(render_stack(path)["manifests"])
    assert all(s.get("storageClassName") for s in specs if s["accessModes"] == ["ReadWriteMany"])


def test_a_release_that_does_not_prefetch_from_nfs_gets_no_page_cache_warning():
    report = stack_with("prod-on-efs", vllm={"version": "0.7.2"})[1]
    assert not any("memory limit" in w for w in report.verdict.warnings)


def test_the_page_cache_warning_names_the_stacks_release():
    assert any("vLLM 0.33.0 needs to prefetch" in w for w in stack("prod-on-efs")[1].verdict.warnings)
