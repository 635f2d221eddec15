"""Facts the program relies on: GPUs, models and vLLM versions. Pure data, each with its source."""
