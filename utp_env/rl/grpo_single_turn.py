"""Single-turn GRPO: the model writes a whole plan in one completion, scored by `PlanReward` (docs/RL.md).

The prompt holds the query (`utp_env.rl.data`, style `single_turn`); the reward parses the
completion's JSON day plan for the row's `query_id` and scores it as an env episode ending in
`submit_plan` (an unreadable reply scores 0).

    python -m utp_env.rl.grpo_single_turn --tiny                      # CPU smoke run, 2 steps
    python -m utp_env.rl.grpo_single_turn --model Qwen/Qwen3-0.6B --max-steps 500 --output-dir runs/grpo1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from utp_env.env.adapters import PlanReward
from utp_env.rl.recipe import Summary, env_config, moved_or_exit, parser, print_summary, run_grpo, settings
from utp_env.rl.scripted import single_turn_conversations


class LoggedPlanReward(PlanReward):
    """`PlanReward` that also appends every reward it returns to `log` (for the run's summary)."""

    def __init__(self, log: list[float], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log = log

    def __call__(self, completions: list[Any], **columns: Any) -> list[float]:
        rewards = super().__call__(completions, **columns)
        self.log.extend(rewards)
        return rewards


def main(argv: Sequence[str] | None = None) -> Summary:
    """Parse the command line, train, print and return the summary."""
    args = parser(__doc__.splitlines()[0] if __doc__ else "single-turn GRPO").parse_args(argv)
    chosen = settings(args)
    log: list[float] = []
    reward = LoggedPlanReward(log, db_path=args.db_path, profile=chosen["profile"], config=env_config(chosen),
                              level=args.level)
    with moved_or_exit():
        summary = run_grpo(args, "single_turn", reward_funcs=[reward], reward_log=log,
                           warm_up_data=single_turn_conversations, use_environment=False)
    print_summary(summary)
    return summary


if __name__ == "__main__":
    main()
