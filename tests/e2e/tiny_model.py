"""A tiny random-weight Llama checkpoint made on the spot, so no model is downloaded from a hub.

Run with the e2e venv's python (it needs torch, transformers, tokenizers):
    python tests/e2e/tiny_model.py OUTPUT_DIR
The shape obeys vLLM's CPU attention: head_dim 64 (16 is refused, issue 16's measurements).
"""

from __future__ import annotations

import sys
from pathlib import Path

# Llama 3's template, cut to what the tests need: role headers, then the assistant's turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|start|>{{ message['role'] }}\n{{ message['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|begin|>", "<|end|>", "<|start|>", "<|pad|>"]
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "vLLM serves large language models with paged attention.",
    "Kubernetes schedules pods on nodes; Prometheus scrapes their metrics.",
    "user assistant system: hello, how are you today? I am fine, thank you.",
]
VOCAB_SIZE = 512
MAX_POSITIONS = 32768  # covers every max_model_len a test stack renders; RoPE costs nothing per position


def train_tokenizer(out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|begin|>", eos_token="<|end|>", pad_token="<|pad|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)


def write_model(out: Path) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=MAX_POSITIONS,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=3,
        tie_word_embeddings=True,
        torch_dtype="bfloat16",
    )
    LlamaForCausalLM(config).to(torch.bfloat16).save_pretrained(out)


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    train_tokenizer(out)
    write_model(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
