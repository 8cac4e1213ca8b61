"""`python -m lmms_agentic.presets [NAME]`: list the model presets, or show one preset's lmms-eval arguments."""

from lmms_agentic.presets import main

raise SystemExit(main())
