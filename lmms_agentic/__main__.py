"""`python -m lmms_agentic ...` runs the project CLI (see lmms_agentic.cli)."""

from lmms_agentic.cli import main

raise SystemExit(main())
