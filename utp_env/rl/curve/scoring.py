"""How a curve scores a policy: multi-turn episodes on held-out queries, greedy and sampled (`sft.evaluate_policy`).

Targets (`TARGETS`): `held_out`, the first `eval_limit` validation queries of the training world at the run's
level; `other_world`, those of another world (another sandbox seed, or `--eval-db-path`); and, with
`transfer`, `paper_task`, the training world's validation queries at level 4 (the paper's task), scored at
the start and at the end only. None of them is ever trained on: the training queries are train-split
queries of world 0.

Metrics (`METRICS`): `success` (the share of episodes whose plan passes every check the level scores:
utp_env/env/levels.py) and `mean_reward` (the env's reward at the level) of greedy episodes, one per query;
`sampled_success` and `sampled_reward` of `eval_samples` episodes per query sampled at GRPO's temperature
(the policy GRPO trains), drawn from one seed at every scoring so that the points of a curve differ by the
policy alone; and at level 4 the first-leg stage (`first_leg_reward`) of the greedy episodes.
"""

from __future__ import annotations

from typing import Any

from utp_env.env.config import find_query, open_database
from utp_env.rl.curve.settings import CurveSettings
from utp_env.rl.curve.stages import first_leg_reward
from utp_env.rl.data import MULTI_TURN_REQUEST, MULTI_TURN_SYSTEM

TARGETS = ("held_out", "other_world", "paper_task")
METRICS = ("success", "mean_reward", "sampled_success", "sampled_reward", "first_leg_reward")
METRIC_TITLES = {"success": "success (every check passes), greedy", "mean_reward": "env reward, greedy",
                 "sampled_success": "success, sampled (k per query)",
                 "sampled_reward": "env reward, sampled (k per query)",
                 "first_leg_reward": "first-leg reward (stage 1), greedy"}
EVAL_SAMPLING_SEED = 0  # the sampled scorings' seed: the same at every step and for every training seed


def scoring_env(settings: CurveSettings) -> tuple[dict[str, Any], tuple[str, ...] | None, int]:
    """(the env config the policy is scored in, the tools it is offered, new tokens per turn): the tiny run's
    (utp_env/rl/sft.py), else the level's tools in the compact mode with the run's limits."""
    from utp_env.rl import sft
    from utp_env.rl.tiny_words import tiny_sft_tools

    config = {"max_observation_chars": sft.TINY_ENV["max_observation_chars"] if settings.model is None else 8000,
              "step_limit": settings.step_limit, "compact": True}
    if settings.model is None:
        return config, tiny_sft_tools(settings.level), 96
    return config, None, 512


class Scorer:
    """Scores a policy on the targets (module docstring) with `sft.evaluate_policy`."""

    def __init__(self, settings: CurveSettings, tokenizer: Any) -> None:
        from utp_env.rl import sft

        self.settings, self.tokenizer = settings, tokenizer
        base: dict[str, Any] = {"db_path": settings.db_path, "profile": settings.profile, "world": 0,
                                "level": settings.level}
        other = ({**base, "db_path": settings.eval_db_path} if settings.eval_db_path
                 else {**base, "db_path": None, "world": settings.eval_world})
        self.targets = {"held_out": base, "other_world": other}
        if settings.transfer:
            self.targets["paper_task"] = {**base, "level": 4}
        self.config, tools, self.max_new_tokens = scoring_env(settings)
        self.dbs = {name: open_database(kw["db_path"], kw["profile"], kw["world"]) for name, kw in self.targets.items()}
        self.schemas = {name: sft.trl_tool_schemas(tools, kw, self.config) for name, kw in self.targets.items()}

    def score(self, model: Any, step: int, last: bool = False) -> list[dict[str, Any]]:
        """The points of `model` at GRPO step `step` (the paper's task only at step 0 and at the `last`)."""
        out = []
        for target, kwargs in self.targets.items():
            if target == "paper_task" and not (step == 0 or last):
                continue
            result = self._evaluate(model, target, kwargs)
            point: dict[str, Any] = {"step": step, "target": target, "success": result["success"],
                                     "mean_reward": result["mean_reward"],
                                     "from_origin": result["from_origin"] / max(result["queries"], 1),
                                     "accepted_calls": result["accepted_calls"], "tool_calls": result["tool_calls"],
                                     "queries": result["queries"], **self._sampled(model, target, kwargs)}
            if kwargs["level"] == 4:
                orgs = [find_query(self.dbs[target], q).org for q in result["query_ids"]]  # type: ignore[union-attr]
                staged = [first_leg_reward(plan, org, r) for plan, org, r in
                          zip(result["plans"], orgs, result["rewards"], strict=True)]
                point["first_leg_reward"] = sum(staged) / max(len(staged), 1)
            out.append(point)
        return out

    def _evaluate(self, model: Any, target: str, kwargs: dict[str, Any], **sampling: Any) -> dict[str, Any]:
        from utp_env.rl import sft

        return sft.evaluate_policy(model, self.tokenizer, kwargs, "validation", self.settings.eval_limit,
                                   self.schemas[target], self.config, system=MULTI_TURN_SYSTEM,
                                   request=MULTI_TURN_REQUEST, max_new_tokens=self.max_new_tokens,
                                   rounds=self.settings.max_turns, **sampling)

    def _sampled(self, model: Any, target: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The success and mean reward of `eval_samples` episodes per query sampled at GRPO's temperature,
        with one seed at every step: each scoring draws the same random numbers."""
        if not self.settings.eval_samples:
            return {"sampled_success": "", "sampled_reward": "", "sampled_from_origin": ""}
        result = self._evaluate(model, target, kwargs, samples=self.settings.eval_samples,
                                temperature=self.settings.temperature, seed=EVAL_SAMPLING_SEED, batch_size=32)
        return {"sampled_success": result["success"], "sampled_reward": result["mean_reward"],
                "sampled_from_origin": result["from_origin"] / max(result["queries"], 1)}
