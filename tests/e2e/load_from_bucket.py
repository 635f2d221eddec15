"""Read a model from its bucket as vLLM's runai_streamer loader does, with the credentials the environment gives.

Run with the e2e venv's python (tests/e2e/test_pod_identity.py):
    python tests/e2e/load_from_bucket.py MODEL_URI MODEL_LOADER_EXTRA_CONFIG [--boto3-only]
Both reads vLLM makes of a bucket, with vLLM's own code: its config and tokenizer files
(vllm/config/model.py `maybe_pull_model_tokenizer_for_runai`: ObjectStorageModel.pull_files, through boto3's
credential chain) and its tensors (RunaiModelStreamerLoader: list_safetensors through boto3, the tensors through
the streamer's C++ S3 client and aws-sdk-cpp's chain). Prints JSON: the files pulled, the checkpoints listed and the
tensors streamed; a refused read ends the process with vLLM's traceback. `--boto3-only`: the pull and the listing
alone, for credentials only boto3 can obtain here (IRSA's: aws-sdk-cpp exchanges the token at the region's AWS STS,
tests/e2e/test_irsa.py).
"""

from __future__ import annotations

import json
import os
import sys

from vllm.config.load import LoadConfig
from vllm.model_executor.model_loader.runai_streamer_loader import RunaiModelStreamerLoader
from vllm.transformers_utils.runai_utils import ObjectStorageModel, list_safetensors

# vllm/config/model.py: the patterns it pulls for a model whose tokenizer is the model.
CONFIG_PATTERNS = ["*.model", "*.py", "*.json"]


def main(argv: list[str]) -> int:
    uri, extra_config, boto3_only = argv[1], json.loads(argv[2]), "--boto3-only" in argv[3:]
    mirror = ObjectStorageModel(url=uri)
    mirror.pull_files(uri, allow_pattern=CONFIG_PATTERNS)
    read = {"pulled": sorted(os.listdir(mirror.dir)), "listed": list_safetensors(path=uri)}
    if not boto3_only:
        loader = RunaiModelStreamerLoader(LoadConfig(load_format="runai_streamer", model_loader_extra_config=extra_config))
        read["tensors"] = [name for name, _tensor in loader._get_weights_iterator(uri, None)]
    print(json.dumps(read))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
