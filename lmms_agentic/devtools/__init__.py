"""Developer tools: the benchmark scaffold (`scaffold`, from `benchmark_template/`), the option-permutation task
generator (`permutations`) and the tiny random-weight VLM checkpoints the demo and the tests run (`tiny_vlm`)."""
