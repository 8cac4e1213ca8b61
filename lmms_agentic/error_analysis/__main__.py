"""``python -m lmms_agentic.error_analysis errors RUN_DIR`` / ``agreement verify.csv`` (see ``commands``)."""

from .commands import main

raise SystemExit(main())
