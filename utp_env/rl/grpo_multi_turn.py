"""Multi-turn GRPO on the UTP env with TRL's `environment_factory` (docs/RL.md).

Each rollout is one env episode: TRL calls `reset(**row)` (the row's `query_id`), the model calls
the env's tools (each call one env step, its answer appended as a tool message) until it stops or
a cap is reached, and `get_reward` returns the episode's reward (`utp_env.rl.env`).

    python -m utp_env.rl.grpo_multi_turn --tiny                       # CPU smoke run, 2 steps
    python -m utp_env.rl.grpo_multi_turn --model Qwen/Qwen3-0.6B --max-steps 500 --output-dir runs/grpo
"""

from __future__ import annotations

from collections.abc import Sequence

from utp_env.rl.recipe import Summary, moved_or_exit, parser, print_summary, run_grpo
from utp_env.rl.scripted import multi_turn_conversations


def main(argv: Sequence[str] | None = None) -> Summary:
    """Parse the command line, train, print and return the summary."""
    args = parser(__doc__.splitlines()[0] if __doc__ else "multi-turn GRPO").parse_args(argv)
    with moved_or_exit():
        summary = run_grpo(args, "multi_turn", warm_up_data=multi_turn_conversations, use_environment=True)
    print_summary(summary)
    return summary


if __name__ == "__main__":
    main()
