"""Host names that resolve to a private endpoint's addresses in the cluster's network, not to public ones.

- AWS PrivateLink: an interface endpoint is network interfaces "assigned private IP addresses from subnets in your
  VPC" (docs.aws.amazon.com/AmazonS3/latest/userguide/privatelink-interface-endpoints.html), and "PrivateLink
  automatically provisions globally unique public DNS names for these private IPs"
  (aws.amazon.com/blogs/storage/introducing-private-dns-support-for-amazon-s3-with-aws-privatelink): the
  endpoint-specific names under vpce.amazonaws.com (vpce.amazonaws.com.cn in China).
- Azure Private Link: a storage account's Blob private endpoint answers in the private DNS zone
  privatelink.blob.core.windows.net (learn.microsoft.com/azure/private-link/private-endpoint-dns, "Storage").
"""

from __future__ import annotations

from urllib.parse import urlsplit

PRIVATE_ENDPOINT_ZONES: dict[str, str] = {
    "vpce.amazonaws.com": "an AWS interface endpoint (PrivateLink)",
    "vpce.amazonaws.com.cn": "an AWS interface endpoint (PrivateLink)",
    "privatelink.blob.core.windows.net": "an Azure private endpoint",
}


def private_endpoint(url: str) -> str | None:
    """What kind of private endpoint the URL's host names, or None for any other host."""
    host = (urlsplit(url).hostname or "").lower()
    return next((kind for zone, kind in PRIVATE_ENDPOINT_ZONES.items() if host.endswith("." + zone)), None)
