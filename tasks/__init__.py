"""lmms-eval task definitions (YAML + hooks), one folder per benchmark. Installed as `lmms_agentic.tasks`;
pass `lmms_agentic.tasks_dir()` to lmms-eval's `--include_path` (done automatically by lmms_agentic.harness.host)."""
