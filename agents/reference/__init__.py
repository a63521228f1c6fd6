"""The reference planner (no LLM): uncertainty-aware buffers, or the deterministic baseline."""

from agents.reference.planner import ReferencePlanner

__all__ = ["ReferencePlanner"]
