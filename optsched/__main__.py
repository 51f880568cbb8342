"""``python -m optsched ...``: the same command line as the ``optsched`` script."""

from optsched.cli import main

raise SystemExit(main())
