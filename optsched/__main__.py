"""``python -m optsched ...``: the same command line as the ``optsched`` script."""

from optsched.cli import main

if __name__ == "__main__":  # importing the module (doctest collection, tools) runs nothing
    raise SystemExit(main())
