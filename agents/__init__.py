"""Agents that plan trips in utp-env: the reference planner and LLM baselines."""
