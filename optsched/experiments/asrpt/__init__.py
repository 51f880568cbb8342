"""A-SRPT's experiments: the paper's sweeps (:mod:`.paper`), its traces' cells (:mod:`.traces`),
the reproductions (:mod:`.repro`) and Table 2 (:mod:`.table2`)."""
