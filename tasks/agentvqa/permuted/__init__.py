"""Generated option-permutation variants (see lmms_agentic.permuted)."""
