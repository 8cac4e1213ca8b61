"""The lmms-eval integration: zero-flag task discovery and results-file provenance (`host`, the one module that
touches lmms-eval internals), running lmms-eval and failing loudly when an evaluation failed (`runner`), and the
offline scripted model `agentic_scripted` (`offline_model`)."""
