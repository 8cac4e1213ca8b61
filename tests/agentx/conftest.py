"""Agent-X judge tests use the judge layer's loopback-server fixtures."""

from ..judges.conftest import make_client, serve

__all__ = ["make_client", "serve"]
