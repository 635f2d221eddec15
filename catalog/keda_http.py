"""The KEDA HTTP add-on (kedacore/http-add-on): what this program renders for scale to zero, and the names its
Helm chart and interceptor use. Sources:

- CRDs: http.keda.sh_httpscaledobjects.yaml (HTTPScaledObject, http.keda.sh/v1alpha1) and
  http.keda.sh_interceptorroutes.yaml (InterceptorRoute, v1beta1: "v0.14.0 introduces the InterceptorRoute
  (v1beta1) API", https://keda.sh/http-add-on/0.14/), config/crd/bases@v0.15.0 (4ea8a863), copied in
  ../shared/crds (docs/sources.md §S10).
- The interceptor's timeouts are install-wide environment variables (interceptor/config/timeouts.go at v0.15.0):
  KEDA_HTTP_REQUEST_TIMEOUT 0s (no total deadline), KEDA_HTTP_READINESS_TIMEOUT 0s (waits for a ready endpoint
  as long as the request deadline allows), KEDA_HTTP_RESPONSE_HEADER_TIMEOUT 300s, KEDA_HTTP_CONNECT_TIMEOUT 500ms.
- The interceptor waits for a ready endpoint of the Service it forwards to, not of the workload it scales
  (interceptor/middleware/endpoint_resolver.go@047f5b85: readyCache.WaitForReady(namespace/target.service)); a
  timeout answers 504, another failure 502.
- The chart's proxy Service: "{{ .Chart.Name }}-{{ .Values.interceptor.proxy.service }}", port
  interceptor.proxy.port, pods labelled app.kubernetes.io/component: interceptor, app.kubernetes.io/name:
  http-add-on (kedacore/charts http-add-on/templates/interceptor/service-proxy.yaml@03d990a2); chart
  keda-add-ons-http, values interceptor-proxy and 8080.
- The interceptor's Prometheus metrics, labelled route_name and route_namespace (the HTTPScaledObject's name and
  namespace): interceptor_request_concurrency (in-flight requests, a gauge), interceptor_request_count_total
  (by code), interceptor_request_duration_seconds (buckets up to 10 s only)
  (interceptor/metrics/instruments.go@3bea59c9; tests/e2e helpers InterceptorMetrics).
"""

from __future__ import annotations

import re

GROUP = "http.keda.sh"
HTTP_SCALED_OBJECT = "HTTPScaledObject"
HTTP_SCALED_OBJECT_API = f"{GROUP}/v1alpha1"
HTTP_SCALED_OBJECT_CRD = f"httpscaledobjects.{GROUP}"
INTERCEPTOR_ROUTE = "InterceptorRoute"
INTERCEPTOR_ROUTE_API = f"{GROUP}/v1beta1"
INTERCEPTOR_ROUTE_CRD = f"interceptorroutes.{GROUP}"
# An InterceptorRoute routes only: the ScaledObject is the user's, with the add-on's external scaler as trigger
# (type external-push, metadata interceptorRoute and scalerAddress <chart>-external-scaler.<namespace>:9090;
# kedacore/http-add-on tests/checks/scaling_phase_statefulset/scaling_phase_statefulset_test.go@4dd989f1;
# keda.sh/http-add-on/0.14/operations/migrate-httpscaledobject-to-interceptorroute).
EXTERNAL_SCALER_SERVICE = "keda-add-ons-http-external-scaler"
EXTERNAL_SCALER_PORT = 9090
RELEASE = "0.15.0"  # the release the CRDs above come from
OLDEST_SUPPORTED = "0.14"  # metrics renamed (route_name, route_namespace) and request timeouts unbounded from 0.14

NAMESPACE = "keda"  # where `helm install http-add-on kedacore/keda-add-ons-http -n keda` puts it
INTERCEPTOR_SERVICE = "keda-add-ons-http-interceptor-proxy"
INTERCEPTOR_PORT = 8080
INTERCEPTOR_POD_LABELS = {"app.kubernetes.io/component": "interceptor", "app.kubernetes.io/name": "http-add-on"}
RESPONSE_HEADER_TIMEOUT_SECONDS = 300  # KEDA_HTTP_RESPONSE_HEADER_TIMEOUT's default

CONCURRENCY = "interceptor_request_concurrency"
REQUEST_COUNT = "interceptor_request_count_total"
# What the interceptor answers when it gives up on a cold start: 504 once the wait ran out, 502 otherwise.
GAVE_UP_CODES = ("502", "504")

VERSION = re.compile(r"^v?([0-9]+)\.([0-9]+)(?:\.[0-9]+)?$")


def parse_version(text: str) -> tuple[int, int]:
    match = VERSION.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a KEDA HTTP add-on version like 0.15.0")
    return int(match.group(1)), int(match.group(2))


def supported(version: str) -> bool:
    return parse_version(version) >= parse_version(OLDEST_SUPPORTED)
