"""What the simulator simulates: jobs and their phases (:mod:`.state`), the servers' free GPUs
and other resources (:mod:`.resources`), and the conversion of the input (core ``Job`` lists or
job tables) into simulated jobs (:mod:`.inputs`).

The lowest layer of :mod:`optsched.sim`: it imports nothing else of the simulator. The engines,
the policies and the results build on it; their public names are exported by :mod:`optsched.sim`.
"""
