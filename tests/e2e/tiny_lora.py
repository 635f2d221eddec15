"""A tiny LoRA adapter for the tiny model (tests/e2e/tiny_model.py), written directly as PEFT's files.

Run with the e2e venv's python (it needs torch and safetensors, both in the venv; peft is not):
    python tests/e2e/tiny_lora.py OUTPUT_DIR
PEFT's layout, which vLLM reads (vllm/lora/peft_helper.py, vllm/lora/utils.py parse_fine_tuned_lora_name):
adapter_config.json with `r`, `lora_alpha` and `target_modules`, and adapter_model.safetensors holding
`base_model.model.model.layers.N.self_attn.<module>.lora_A.weight` (r x in) and `...lora_B.weight` (out x r).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RANK = 8
TARGET_MODULES = ("q_proj", "v_proj")
LAYERS, HIDDEN, HEAD_DIM, KV_HEADS = 2, 128, 64, 2  # the tiny model's shape


def main(argv: list[str]) -> int:
    import torch
    from safetensors.torch import save_file

    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1)
    outputs = {"q_proj": HIDDEN, "v_proj": KV_HEADS * HEAD_DIM}
    tensors = {}
    for layer in range(LAYERS):
        for module in TARGET_MODULES:
            prefix = f"base_model.model.model.layers.{layer}.self_attn.{module}"
            tensors[f"{prefix}.lora_A.weight"] = (torch.randn(RANK, HIDDEN) * 0.1).to(torch.bfloat16)
            tensors[f"{prefix}.lora_B.weight"] = (torch.randn(outputs[module], RANK) * 0.1).to(torch.bfloat16)
    save_file(tensors, str(out / "adapter_model.safetensors"))
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "r": RANK,
        "lora_alpha": 2 * RANK,
        "lora_dropout": 0.0,
        "bias": "none",
        "target_modules": list(TARGET_MODULES),
        "base_model_name_or_path": "tiny-llama",
        "fan_in_fan_out": False,
        "inference_mode": True,
    }
    (out / "adapter_config.json").write_text(json.dumps(config, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
