"""Benchmark queries: generation, feasibility checking and JSONL input/output.

Parameters in configs/queries.yaml; docs/RUNS.md says how runs choose splits.
"""

from utp_env.queries.feasibility import TripQuote, cheapest_trip, check, skeleton
from utp_env.queries.generate import QueryConfig, assign_split, generate_queries, load_query_config
from utp_env.queries.io import dumps_queries, loads_queries, read_queries, write_queries

__all__ = ["QueryConfig", "TripQuote", "assign_split", "cheapest_trip", "check", "dumps_queries",
           "generate_queries", "load_query_config", "loads_queries", "read_queries", "skeleton",
           "write_queries"]
