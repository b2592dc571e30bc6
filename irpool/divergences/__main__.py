"""`python -m irpool.divergences > docs/divergences.md`."""

from .doc import main

raise SystemExit(main())
