"""Reinforcement learning on the UTP environment with TRL's GRPO (docs/RL.md).

- `utp_env.rl.data`: the query set as a `datasets.Dataset` (`prompt`, `query_id`) for both recipes.
- `utp_env.rl.env`: `rl_env_class`, the TRL environment class (`UTPToolEnv` plus `get_reward`,
  which scores a rollout that ended without `submit` as a step-limit cut, and a log of episodes).
- `utp_env.rl.tiny`: a tiny causal LM built locally (random weights, a byte-level BPE tokenizer
  trained here with `tokenizers`, TRL's Qwen3 tool-calling chat template, left padding) and a short
  format warm-up, so that both recipes run on a CPU with nothing downloaded.
- `utp_env.rl.grpo_multi_turn` / `utp_env.rl.grpo_single_turn`: the two GRPO scripts
  (`python -m utp_env.rl.grpo_multi_turn --tiny`, or `--model <hub name>` on a GPU).
- `utp_env.rl.diagnostics`: did training move the policy's trainable tensors (a loud error if not).
- `utp_env.rl.curve`: the learning curve, held-out reward against GRPO steps over seeds
  (`python -m utp_env.rl.curve --tiny --out DIR`).

Importing this package imports nothing heavy; torch, trl, datasets and tokenizers (the `rl`
extra: `pip install 'utp-env[rl]'`) are imported by the modules that need them.
"""
