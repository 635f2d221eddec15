"""Scale to zero behind the KEDA HTTP add-on, decided once: the HTTPScaledObject's target and hosts, the cold
start from zero it must wait out, the longest wait the request path allows, and the interceptor's timeouts
derived from both. Pure. docs/scale-to-zero.md explains each figure.

The cold start from zero is the new-node start with nothing warm: node provisioning, the image pull, with
per-replica claims the download to ordinal 0's empty claim (the StatefulSet starts at zero, so its first start
comes through the interceptor), then the load, engine start and compile the startup probe's budget is made of
(preflight/delivery.py terms), without the probe's safety factor: the prediction. The interceptor waits for the
budget (with the factor), but never longer than the request path would wait anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog import keda_http
from config.exposure import ExposureConfig
from config.observability import AutoscalingConfig, HttpAddOnConfig
from plan.identity import Identity
from plan.names import service_host
from plan.scaling import Workload
from preflight.delivery import COMPILE, DOWNLOAD, ENGINE_START, IMAGE_PULL, LOAD, DeliveryBudget

START_TERMS = (IMAGE_PULL, LOAD, ENGINE_START, COMPILE)  # of DeliveryBudget.terms


@dataclass(frozen=True)
class Term:
    name: str
    seconds: float
    how: str

    def render(self) -> str:
        return f"{self.seconds:.0f} s {self.name}"


@dataclass(frozen=True)
class ColdStart:
    terms: tuple[Term, ...]  # node provisioning, image pull, (a per-replica claim's download,) load, engine start, compile
    # node provisioning + image pull (+ that download) + the startup probe's budget, each with its safety factor
    budget_seconds: int

    @property
    def seconds(self) -> int:
        """The predicted cold start: the terms' sum, whole seconds up."""
        return -int(-sum(term.seconds for term in self.terms) // 1)

    @property
    def downloads(self) -> bool:
        """Whether the start downloads the weights first: ordinal 0's empty per-replica claim (cold_start_of)."""
        return any(term.name == DOWNLOAD for term in self.terms)

    def explain(self) -> str:
        return f"{self.seconds} s = " + " + ".join(term.render() for term in self.terms)


@dataclass(frozen=True)
class Wait:
    """One bound on how long a request may wait, and the key that sets it."""

    key: str
    seconds: int

    def render(self) -> str:
        return f"{self.seconds} s ({self.key})"


@dataclass(frozen=True)
class ZeroPlan:
    config: HttpAddOnConfig
    name: str  # the HTTPScaledObject's: the instance (the interceptor's metrics carry it as route_name)
    namespace: str  # the stack's (route_namespace)
    labels: dict[str, str]
    workload: Workload  # what it scales
    service: str  # the Service the interceptor forwards to and waits on
    port: int
    route_host: str  # the one host the HTTPScaledObject routes; the HTTPRoute and the smoke test send it
    min_replicas: int
    max_replicas: int
    target_concurrency: int  # in-flight requests per replica
    cold_start: ColdStart
    waits: tuple[Wait, ...]  # every bound on the request path, the client's first

    @property
    def at_zero(self) -> bool:
        return self.min_replicas == 0

    @property
    def interceptor_host(self) -> str:
        return service_host(self.config.interceptor_service, self.config.namespace)

    @property
    def scaler_address(self) -> str:
        """The external scaler an InterceptorRoute's ScaledObject triggers on (host:port)."""
        return f"{self.config.external_scaler_service}.{self.config.namespace}:{keda_http.EXTERNAL_SCALER_PORT}"

    @property
    def interceptor_url(self) -> str:
        return f"http://{self.interceptor_host}:{self.config.interceptor_port}"

    @property
    def longest_wait(self) -> Wait:
        """The tightest bound: no request waits longer than it."""
        return min(self.waits, key=lambda wait: wait.seconds)

    @property
    def fits(self) -> bool:
        """Whether the predicted cold start ends before the request path gives up."""
        return self.cold_start.seconds <= self.longest_wait.seconds

    @property
    def condition_wait_seconds(self) -> int:
        """timeouts.conditionWait: the cold start's budget, but no longer than anyone on the path waits."""
        return min(self.cold_start.budget_seconds, self.longest_wait.seconds)

    def rows(self) -> list[tuple[str, str]]:
        """The report's lines: the cold start against the wait, and the timeouts that follow."""
        cfg, wait = self.config, self.longest_wait
        verdict = "fits" if self.fits else "does not fit"
        return [
            (
                "Scale to zero",
                f"min {self.min_replicas} replicas through the KEDA HTTP add-on {cfg.version} "
                f"({self.interceptor_host}:{cfg.interceptor_port}); the last goes after {cfg.scaledown_period_seconds} s idle",
            ),
            ("Cold start from zero", f"{self.cold_start.explain()} (predicted)"),
            (
                "Longest wait",
                f"{wait.render()}, the tightest of "
                + ", ".join(w.render() for w in self.waits)
                + f": the cold start {verdict}",
            ),
            (
                "Interceptor timeouts",
                f"conditionWait {self.condition_wait_seconds} s (the cold start's budget {self.cold_start.budget_seconds} s, "
                f"at most the wait), responseHeader {self.response_header_seconds} s",
            ),
        ]

    def as_dict(self) -> dict[str, object]:
        return {
            "min_replicas": self.min_replicas,
            "cold_start_seconds": self.cold_start.seconds,
            "cold_start_terms": {term.name: round(term.seconds, 3) for term in self.cold_start.terms},
            "cold_start_budget_seconds": self.cold_start.budget_seconds,
            "waits": {w.key: w.seconds for w in self.waits},
            "longest_wait": {"key": self.longest_wait.key, "seconds": self.longest_wait.seconds},
            "fits": self.fits,
            "condition_wait_seconds": self.condition_wait_seconds,
            "response_header_seconds": self.response_header_seconds,
        }

    @property
    def response_header_seconds(self) -> int:
        """timeouts.responseHeader: a request that is not streamed gets its headers only once generated, and no
        generation outlasts the path's bound; never below the add-on's default."""
        return max(self.longest_wait.seconds, keda_http.RESPONSE_HEADER_TIMEOUT_SECONDS)


def cold_start_of(budget: DeliveryBudget, node_provisioning_seconds: int) -> ColdStart:
    """The start from zero, term by term (`budget`: the delivery's). A shared volume's download is the first
    start's only, done by the awaited Job before the server starts; a per-replica claim's is the server pod's own
    init container's, and the StatefulSet is created at zero replicas, so the first start from zero (the smoke test
    `pulumi up` waits for) is a first-time ordinal's on an empty claim and downloads: it counts, as in the budget."""
    node = Term("node provisioning", float(node_provisioning_seconds), "autoscaling.http_add_on.node_provisioning_seconds")
    terms = tuple(Term(t.name, t.seconds, t.how) for t in budget.terms if t.name in START_TERMS)
    download = budget.first_time_download_seconds
    if download:
        how = f"{budget.terms[1].how}: ordinal 0's empty claim on the first start from zero (delivery.mode per_replica_volume)"
        terms = (terms[0], Term(DOWNLOAD, budget.download_seconds, how), *terms[1:])
    refetch = math.ceil(download * budget.probe.safety_factor)  # with the safety factor, as the first start's budget
    return ColdStart(
        (node, *terms), node_provisioning_seconds + budget.image_pull_seconds + refetch + budget.probe.total_seconds
    )


def request_waits(add_on: HttpAddOnConfig, exposure: ExposureConfig) -> tuple[Wait, ...]:
    """The bounds a held request meets: the client's, the Gateway route's timeouts.request, the interceptor's
    KEDA_HTTP_REQUEST_TIMEOUT."""
    waits = [Wait("autoscaling.http_add_on.client_timeout_seconds", add_on.client_timeout_seconds)]
    gateway = exposure.gateway
    if gateway is not None and gateway.request_timeout_seconds is not None:
        waits.append(Wait("exposure.gateway.request_timeout_seconds", gateway.request_timeout_seconds))
    if add_on.request_timeout_seconds is not None:
        waits.append(Wait("autoscaling.http_add_on.request_timeout_seconds", add_on.request_timeout_seconds))
    return tuple(waits)


def resolve_zero(
    cfg: AutoscalingConfig,
    exposure: ExposureConfig,
    identity: Identity,
    workload: Workload,
    port: int,
    running_threshold: float,
    budget: DeliveryBudget,
) -> ZeroPlan | None:
    """None unless autoscaling is on with the add-on. `running_threshold`: plan/scaling.py's, per replica."""
    add_on = cfg.http_add_on
    if add_on is None or not cfg.enabled:
        return None
    service = identity.names.server
    return ZeroPlan(
        config=add_on,
        name=identity.instance,
        namespace=identity.namespace,
        labels=identity.selector("server"),
        workload=workload,
        service=service,
        port=port,
        route_host=service_host(service, identity.namespace),
        min_replicas=cfg.min_replica_count,
        max_replicas=cfg.max_replica_count,
        target_concurrency=add_on.target_concurrency or max(1, int(running_threshold)),
        cold_start=cold_start_of(budget, add_on.node_provisioning_seconds),
        waits=request_waits(add_on, exposure),
    )
