"""`python -m lmms_agentic.lmeval ...` (see lmms_agentic.lmeval.cli)."""

from lmms_agentic.lmeval.cli import main

raise SystemExit(main())
