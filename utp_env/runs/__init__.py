"""Benchmark runs: schedule episodes locally or on Ray, store them resumably, summarise them."""
