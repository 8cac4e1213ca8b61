"""AgentVQA task definitions."""
