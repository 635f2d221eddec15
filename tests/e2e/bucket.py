"""Fill a bucket of moto's S3 server with a model folder and hand back a key that reads it.

Run with the e2e venv's python (it needs boto3):
    python tests/e2e/bucket.py ENDPOINT_URL MODEL_DIR s3://BUCKET/PREFIX/
moto's server checks no request until told to, so this script first creates an IAM user allowed s3:* and its
access key, a role allowed the same and a session of it (STS AssumeRole, what EKS Pod Identity's agent hands a
pod), the bucket and its objects, then switches authentication on (POST /moto-api/reset-auth, 0 requests left
unchecked): from then on a wrong key, secret or session token is refused as S3 refuses it. Prints JSON: `user`,
the two names a credentials Secret holds (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), and `role_session`, the
session's AccessKeyId, SecretAccessKey and Token as the agent's credentials response names them.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import boto3  # the e2e venv's: this script runs there (tests/e2e/test_object_storage.py)

USER = "vllm-reader"
ROLE = "vllm-reader-role"
TRUST_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}
READ_POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
# moto takes any key until authentication is on; these only sign the set-up requests.
SETUP_KEY = {"aws_access_key_id": "setup", "aws_secret_access_key": "setup", "region_name": "us-east-1"}


def main(argv: list[str]) -> int:
    endpoint, model_dir, uri = argv[1], Path(argv[2]), argv[3]
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    iam = boto3.client("iam", endpoint_url=endpoint, **SETUP_KEY)
    iam.create_user(UserName=USER)
    iam.put_user_policy(UserName=USER, PolicyName="read-models", PolicyDocument=json.dumps(READ_POLICY))
    key = iam.create_access_key(UserName=USER)["AccessKey"]
    role = iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(TRUST_POLICY))["Role"]
    iam.put_role_policy(RoleName=ROLE, PolicyName="read-models", PolicyDocument=json.dumps(READ_POLICY))
    sts = boto3.client("sts", endpoint_url=endpoint, **SETUP_KEY)
    session = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="vllm-server")["Credentials"]
    s3 = boto3.client("s3", endpoint_url=endpoint, **SETUP_KEY)
    s3.create_bucket(Bucket=bucket)
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        s3.upload_file(str(path), bucket, prefix + path.relative_to(model_dir).as_posix())
    # text/plain: a form-encoded body reaches moto's handler empty.
    reset = f"{endpoint}/moto-api/reset-auth"
    request = urllib.request.Request(reset, data=b"0", method="POST", headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
    user = {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}
    role_session = {"AccessKeyId": session["AccessKeyId"], "SecretAccessKey": session["SecretAccessKey"]}
    print(json.dumps({"user": user, "role_session": role_session | {"Token": session["SessionToken"]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
