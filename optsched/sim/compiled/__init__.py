"""The compiled simulator core (numba): which runs it covers and its driver (:mod:`.driver`), and the
kernel itself (:mod:`.kernel`, the only module here that imports numba, loaded when a run needs it)."""
