"""The model cache PVC, the pre-download Job and the server's wait for it."""

from __future__ import annotations

import json

from components.render.cache import DOWNLOAD_SCRIPT
from plan.names import HF_HOME
from tests.kubernetes_fixtures import (
    configured,
    env_of,
    manifests,
    model_cache_job,
    model_cache_jobs,
    of_kind,
    one,
    plan_of,
    pod_spec,
    stack,
)


def job_container(objects: list[dict]) -> dict:
    return model_cache_job(objects)["spec"]["template"]["spec"]["containers"][0]


def test_prod_cache_is_sized_from_the_weights_plus_headroom():
    cfg, report = stack("prod-on-efs")  # 131.4 GiB x 1.25 + 1 = 165.3
    pvc = one(manifests(cfg, report), "PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "166Gi"


def test_a_user_set_cache_size_is_used():
    pvc = one(manifests(*configured(cache={"size_gib": 50})), "PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "50Gi"


def test_cache_includes_a_catalog_draft_model():
    plain = one(manifests(*configured()), "PersistentVolumeClaim")["spec"]["resources"]["requests"]["storage"]
    with_draft = one(
        manifests(
            *configured(
                engine={
                    "max_model_len": 8192,
                    "speculative": {"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3},
                }
            )
        ),
        "PersistentVolumeClaim",
    )["spec"]["resources"]["requests"]["storage"]
    assert int(with_draft.removesuffix("Gi")) > int(plain.removesuffix("Gi"))


def test_prod_shares_one_read_write_many_claim_of_its_storage_class():
    spec = one(manifests(*stack("prod-on-efs")), "PersistentVolumeClaim")["spec"]
    assert (spec["accessModes"], spec["storageClassName"]) == (["ReadWriteMany"], "efs-sc")


def test_storage_class_comes_from_config():
    pvc = one(manifests(*configured(cache={"storage_class_name": "filestore-rwx"})), "PersistentVolumeClaim")
    assert pvc["spec"]["storageClassName"] == "filestore-rwx"


def test_no_storage_class_means_the_cluster_default():
    assert "storageClassName" not in one(manifests(*stack("dev")), "PersistentVolumeClaim")["spec"]


def test_existing_claim_is_mounted_and_no_volume_is_created():
    objects = manifests(*configured(cache={"existing_claim": "shared-models"}))
    volumes = {v["name"]: v for v in pod_spec(objects)["volumes"]}
    assert of_kind(objects, "PersistentVolumeClaim") == []
    assert volumes["model-cache"]["persistentVolumeClaim"] == {"claimName": "shared-models"}


def test_download_job_fetches_the_model_at_its_pinned_revision():
    objects = manifests(*configured(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f"}))
    assert json.loads(env_of(job_container(objects))["DOWNLOADS"]) == [["meta-llama/Llama-3.1-8B-Instruct", "0e9e39f"]]


def test_download_job_also_fetches_the_draft_model():
    objects = manifests(
        *configured(
            engine={
                "max_model_len": 8192,
                "speculative": {"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3},
            }
        )
    )
    repos = [repo for repo, _ in json.loads(env_of(job_container(objects))["DOWNLOADS"])]
    assert repos == ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-0.6B"]


def test_download_job_writes_into_the_cache_volume_at_hf_home():
    container = job_container(manifests(*stack("prod-on-efs")))
    assert env_of(container)["HF_HOME"] == HF_HOME
    assert {"name": "model-cache", "mountPath": HF_HOME} in container["volumeMounts"]


def test_download_job_reads_the_token_from_a_mounted_file():
    objects = manifests(*stack("prod-on-efs"), with_token=True)
    container = job_container(objects)
    volumes = model_cache_job(objects)["spec"]["template"]["spec"]["volumes"]
    assert env_of(container)["HF_TOKEN_PATH"] == "/var/run/secrets/huggingface/token"
    assert {"name": "hf-token", "secret": {"secretName": "llama-hf-token", "defaultMode": 0o440}} in volumes


def test_hugging_face_token_is_never_an_environment_variable():
    container = job_container(manifests(*stack("prod-on-efs"), with_token=True))
    assert "HF_TOKEN" not in env_of(container)
    assert all("valueFrom" not in entry for entry in container["env"])


def test_token_secret_holds_the_token_under_the_mounted_key():
    secret = one(manifests(*stack("dev"), with_token=True), "Secret")
    assert (secret["metadata"]["name"], list(secret["stringData"])) == ("llama-hf-token", ["token"])


def test_no_token_secret_or_mount_for_a_public_model():
    objects = manifests(*stack("dev"))
    assert of_kind(objects, "Secret") == [] and "HF_TOKEN_PATH" not in env_of(job_container(objects))


def test_download_job_has_one_writer_and_bounded_retries():
    spec = model_cache_job(manifests(*stack("prod-on-efs")))["spec"]
    assert (spec.get("parallelism", 1), spec["backoffLimit"], spec["template"]["spec"]["restartPolicy"]) == (1, 4, "Never")


def test_download_job_deadline_grows_with_the_weights():
    prod = model_cache_job(manifests(*stack("prod-on-efs")))["spec"]["activeDeadlineSeconds"]
    dev = model_cache_job(manifests(*stack("dev")))["spec"]["activeDeadlineSeconds"]
    assert prod == 2934 and prod > dev  # 131.4 GiB / 0.1 GiB/s x 1.5 + 600 s bind + 242 s image pull + 120 s


def test_download_job_deadline_includes_the_image_pull_allowance():
    slow = model_cache_job(manifests(*configured(server={"image_pull_seconds": 3600})))["spec"]["activeDeadlineSeconds"]
    fast = model_cache_job(manifests(*configured()))["spec"]["activeDeadlineSeconds"]
    assert slow - fast == 3600 - 242  # the 11.77 GiB image at 50 MiB/s


def test_download_keeps_the_xet_chunk_cache_off_the_shared_volume():
    env = env_of(job_container(manifests(*stack("prod-on-efs"))))
    assert env["HF_XET_CHUNK_CACHE_SIZE_BYTES"] == "0" and not env["HF_XET_CACHE"].startswith(HF_HOME)


def test_pvc_name_changes_with_its_size_so_pulumi_replaces_it_create_before_delete():
    small = one(manifests(*configured(cache={"size_gib": 50})), "PersistentVolumeClaim")["metadata"]["name"]
    large = one(manifests(*configured(cache={"size_gib": 60})), "PersistentVolumeClaim")["metadata"]["name"]
    assert small != large and small.startswith("llama-model-cache-")


def test_pvc_name_changes_with_the_storage_class():
    default = one(manifests(*configured()), "PersistentVolumeClaim")["metadata"]["name"]
    rwx = one(manifests(*configured(cache={"storage_class_name": "filestore-rwx"})), "PersistentVolumeClaim")
    assert default != rwx["metadata"]["name"]


def test_server_and_job_mount_the_created_pvc_by_its_name():
    objects = manifests(*stack("prod-on-efs"))
    claim = one(objects, "PersistentVolumeClaim")["metadata"]["name"]
    job_volumes = model_cache_job(objects)["spec"]["template"]["spec"]["volumes"]
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}} in pod_spec(objects)["volumes"]
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}} in job_volumes


def test_a_new_volume_gets_a_new_download_job_so_the_empty_volume_is_filled():
    first = model_cache_job(manifests(*configured(cache={"size_gib": 50})))["metadata"]["name"]
    second = model_cache_job(manifests(*configured(cache={"size_gib": 60})))["metadata"]["name"]
    assert first != second


def test_the_completion_marker_depends_on_the_content_not_the_volume():
    first = env_of(job_container(manifests(*configured(cache={"size_gib": 50}))))["CACHE_MARKER"]
    second = env_of(job_container(manifests(*configured(cache={"size_gib": 60}))))["CACHE_MARKER"]
    assert first == second


def test_read_write_many_download_job_may_run_on_any_node():
    job = model_cache_job(manifests(*stack("prod-on-efs")))["spec"]["template"]["spec"]
    assert "affinity" not in job and "tolerations" not in job


def test_read_write_once_download_job_runs_on_the_server_gpu_nodes_so_the_volume_lands_in_their_zone():
    objects = manifests(
        *configured(cache={"access_mode": "ReadWriteOnce"}, gpu={"product": "A100-SXM4-80GB", "node_selector": {"pool": "gpu"}})
    )
    job, server_pod = model_cache_job(objects)["spec"]["template"]["spec"], pod_spec(objects)
    assert [job[key] for key in ("affinity", "tolerations", "nodeSelector")] == [
        server_pod[key] for key in ("affinity", "tolerations", "nodeSelector")
    ]


def test_read_write_once_download_job_requests_no_gpu():
    job = model_cache_job(manifests(*configured(cache={"access_mode": "ReadWriteOnce"})))["spec"]["template"]["spec"]
    assert "nvidia.com/gpu" not in job["containers"][0]["resources"]["limits"]


def test_download_job_is_not_garbage_collected_under_pulumi():
    assert "ttlSecondsAfterFinished" not in model_cache_job(manifests(*stack("prod-on-efs")))["spec"]


def test_download_job_name_changes_with_the_revision():
    first = model_cache_job(manifests(*configured()))["metadata"]["name"]
    second = model_cache_job(manifests(*configured(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "abc"})))
    assert first != second["metadata"]["name"] and first.startswith("llama-model-download-")


def test_download_script_verifies_every_shard_before_writing_the_marker():
    assert DOWNLOAD_SCRIPT.index("shards missing") < DOWNLOAD_SCRIPT.index("marker.write_text")


def test_download_skips_duplicate_checkpoints():
    ignored = json.loads(env_of(job_container(manifests(*stack("prod-on-efs"))))["IGNORE_PATTERNS"])
    assert ignored == ["original/*", "consolidated*", "*.pth"]


def test_server_waits_for_the_completion_marker_written_by_the_job():
    cfg, report = stack("prod-on-efs")
    objects = manifests(cfg, report)
    wait = pod_spec(objects)["initContainers"][0]
    assert env_of(wait)["CACHE_MARKER"] == env_of(job_container(objects))["CACHE_MARKER"] == plan_of(cfg).delivery.marker_path
    assert wait["command"][:2] == ["sh", "-c"] and "$CACHE_MARKER" in wait["command"][2]


def test_local_path_model_needs_no_download_job_and_no_wait():
    objects = manifests(
        *configured(
            model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "llama-8b"}, cache={"existing_claim": "models"}
        )
    )
    assert model_cache_jobs(objects) == [] and "initContainers" not in pod_spec(objects)
