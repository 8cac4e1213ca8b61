"""`lmms-agentic tool-server`: serve Agent-X tools over HTTP for the `remote` backend.

Owns the command's options (standard library only, so the CLI starts without loading the tools); the server itself
(`lmms_agentic.tasks.agentx.tools.server`, which declares the same options for `python -m` on that module) is
imported when the command runs.  Loopback by default; any other address needs a token.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_PORT = 8765
DEFAULT_WORKERS = 4
HELP = "serve Agent-X tools over HTTP for the `remote` backend (loopback unless given a token)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; any other needs a token)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    parser.add_argument("--token-file", type=Path, default=None,
                        help="file whose first line is the bearer token (else $LMMS_AGENTIC_AGENTX_TOOL_TOKEN)")
    parser.add_argument("--max-workers", type=int, default=DEFAULT_WORKERS,
                        help=f"tool calls at once (default {DEFAULT_WORKERS})")


def execute(args: argparse.Namespace) -> int:
    from lmms_agentic.tasks.agentx.tools.server import serve

    return serve(args.host, args.port, args.token_file, args.max_workers)
