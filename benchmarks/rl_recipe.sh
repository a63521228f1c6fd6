#!/usr/bin/env bash
# The RL recipe end to end, per level of the task: SFT on the level's demonstrations, GRPO on its reward, the
# learning curve over seeds scored on held-out queries, and its plot (docs/RL.md "The recipe on a GPU").
#
#   bash benchmarks/rl_recipe.sh MODEL_DIR [LEVELS] [OUT]     # a real model on a GPU (default levels: 1 2)
#   bash benchmarks/rl_recipe.sh --tiny [LEVELS] [OUT]        # its CPU twin: the tiny model, 2 steps per level
#
# MODEL_DIR is a tool-calling chat model on disk (e.g. Qwen2.5-0.5B-Instruct, downloaded beforehand). Each level
# writes OUT/level<N>/ (curve.csv, train.csv, curve.json with the settings, the machine and the level's target,
# curve.png). The GPU defaults are utp_env/rl/curve/settings.py's MODEL_DEFAULTS (planned for a 0.5 B model on one
# H100 in under 10 minutes per level; docs/RL.md has the arithmetic). CI runs the CPU twin of every level
# (tests/rl/test_rl_curve.py runs the same command with the same arguments through Python).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: bash benchmarks/rl_recipe.sh MODEL_DIR|--tiny [LEVELS] [OUT]" >&2
  exit 2
fi
WHICH=$1
LEVELS=${2:-"1 2"}
OUT=${3:-runs/rl-recipe}
PYTHON=${PYTHON:-python}

if [ "$WHICH" = "--tiny" ]; then
  MODEL=(--tiny)
  SMOKE=(--seeds 0 --steps 2 --every 1 --demos 4 --sft-epochs 1 --eval-limit 2 --eval-samples 2
         --queries-per-step 2 --num-generations 2 --pretrain-steps 20)
else
  if [ ! -f "$WHICH/config.json" ]; then
    echo "rl_recipe: $WHICH is not a model directory (no config.json); give a tool-calling chat model on disk" >&2
    exit 2
  fi
  "$PYTHON" - <<'EOF' || { echo "rl_recipe: no CUDA device; run the CPU twin with --tiny" >&2; exit 2; }
import sys
import torch
sys.exit(0 if torch.cuda.is_available() else 1)
EOF
  MODEL=(--model "$WHICH")
  # vLLM generates the rollouts when it is installed (the 10-minute budget of docs/RL.md assumes it)
  if "$PYTHON" -c "import vllm" 2>/dev/null; then MODEL+=(--vllm); else
    echo "rl_recipe: vLLM not installed: GRPO generates with transformers (slower; pip install vllm)" >&2; fi
  SMOKE=()
fi

for level in $LEVELS; do
  case "$level" in 1|2|3|4) ;; *) echo "rl_recipe: level $level is not one of 1 2 3 4" >&2; exit 2 ;; esac
  # the train split the demonstrations and GRPO read is built on first use (its prefix only)
  "$PYTHON" -m utp_env.rl.curve "${MODEL[@]}" --level "$level" "${SMOKE[@]}" --out "$OUT/level$level"
done
echo "rl_recipe: wrote ${LEVELS// /, } to $OUT"
