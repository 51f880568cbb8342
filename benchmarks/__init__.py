"""Speed and quality benchmarks (never timed unit tests). Run all: ``make bench`` or
``python -m benchmarks [NAME ...]``; each ``bench_<name>.py`` has ``main(argv=None)`` and writes
``benchmarks/results/<name>.json``."""
