"""Shared machinery for every benchmark: canonical documents, data location, answer extraction,
media handling and statistics. Installed as `lmms_agentic.adapters`."""
