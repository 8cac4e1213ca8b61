"""Agent-X task definitions (828 vision-centric tool-use tasks scored by an LLM judge)."""
