"""AWS endpoint names: the region an S3 endpoint serves, and that region's STS endpoint.

- S3's regional endpoints are s3.REGION.amazonaws.com, with s3-fips and s3.dualstack variants and the legacy
  s3-REGION form; s3.amazonaws.com and s3-external-1.amazonaws.com are us-east-1's
  (docs.aws.amazon.com/general/latest/gr/s3.html, "Amazon S3 endpoints").
- An S3 interface endpoint (AWS PrivateLink) is reached as bucket.vpce-ID.s3.REGION.vpce.amazonaws.com, the
  endpoint_url boto3's guide gives for it (docs.aws.amazon.com/AmazonS3/latest/userguide/privatelink-interface-endpoints.html;
  boto3 guide s3-example-privatelink).
- China's regions end in amazonaws.com.cn (docs.amazonaws.cn/en_us/aws/latest/userguide/endpoints-Beijing.html).
- STS's regional endpoint is sts.REGION.amazonaws.com (.cn in China) (docs.aws.amazon.com/general/latest/gr/sts.html);
  with an STS interface endpoint and private DNS, the same name resolves to it inside the VPC.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_S3_REGIONAL_HOST = re.compile(
    r"(?:.+\.)?s3(?:-fips)?(?:\.dualstack)?[.-](?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?"
)
_S3_US_EAST_1_HOST = re.compile(r"(?:.+\.)?s3(?:-external-1)?\.amazonaws\.com")
US_EAST_1 = "us-east-1"


def s3_region(endpoint_url: str) -> str | None:
    """The region an AWS S3 endpoint URL serves; None for any other host (MinIO, Ceph RGW, a private name)."""
    host = (urlsplit(endpoint_url).hostname or "").lower()
    regional = _S3_REGIONAL_HOST.fullmatch(host)
    if regional is not None:
        return regional["region"]
    return US_EAST_1 if _S3_US_EAST_1_HOST.fullmatch(host) else None


def sts_endpoint(region: str) -> str:
    """The region's STS endpoint URL."""
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return f"https://sts.{region}{suffix}"
