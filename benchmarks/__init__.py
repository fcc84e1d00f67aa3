"""Speed and memory benchmarks: `python -m benchmarks.run --help`."""
