"""Evaluation of travel plans: commonsense and hard constraint checks, BAS/CATS/TDAS, the TripCraft
metrics, and aggregation over many plans (formulas in docs/METRICS.md)."""

from utp_env.evaluation.evaluate import evaluate
from utp_env.evaluation.report import CheckResult, EvaluationReport

__all__ = ["CheckResult", "EvaluationReport", "evaluate"]
