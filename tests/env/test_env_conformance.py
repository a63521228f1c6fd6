"""Gymnasium conformance of every registered `utp_env/` id: env checker, seeding determinism,
pickling, sync and async vectorisation, step-limit truncation, registration on import."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import yaml
from gymnasium.utils.env_checker import check_env

import utp_env  # noqa: F401 - registers the ids
from utp_env.env import ENV_IDS as DECLARED_IDS
from utp_env.env import register_envs
from utp_env.env.config import ENV_CONFIG_PATH, EnvConfig
from utp_env.env.reward import DEFAULT_REWARD_WEIGHTS

ENV_IDS = [i for i in gym.registry if i.startswith("utp_env/")]


def rollout(env: gym.Env, seed: int, steps: int) -> list[object]:
    """Observations, rewards and ends of `steps` actions sampled from the seeded action space."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    out: list[object] = [obs, info["episode_id"], info["query"]["query_id"]]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append((obs, reward, terminated, truncated))
    return out


def test_ids_are_registered_and_registration_is_idempotent() -> None:
    assert ENV_IDS == list(DECLARED_IDS) == ["utp_env/UTP-v0", "utp_env/UTP-Replan-v0", "utp_env/UTP-L1-v0",
                                             "utp_env/UTP-L2-v0", "utp_env/UTP-L3-v0", "utp_env/UTP-L4-v0"]
    register_envs()
    register_envs()
    assert [i for i in gym.registry if i.startswith("utp_env/")] == ENV_IDS


def test_import_registers_without_loading_the_database() -> None:
    code = ("import sys, utp_env, gymnasium as gym; assert 'utp_env/UTP-v0' in gym.registry; "
            "assert 'utp_env/UTP-Replan-v0' in gym.registry; "
            "assert 'utp_env.tools.database' not in sys.modules, 'registration loaded the database'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_shipped_env_yaml_equals_code_defaults() -> None:
    """The YAML holds every knob at its default except the reward weights, whose defaults are the
    reward's table (utp_env/env/reward/: the file names only the weights a researcher changes)."""
    defaults = EnvConfig().model_dump()
    assert defaults.pop("reward_weights") == DEFAULT_REWARD_WEIGHTS
    assert yaml.safe_load(ENV_CONFIG_PATH.read_text()) == defaults


def test_bad_config_is_refused_with_its_field() -> None:
    with pytest.raises(ValueError, match="reward_weights"):
        EnvConfig(reward_weights={"not_a_metric": 1.0})
    with pytest.raises(ValueError, match="step_limit"):
        gym.make("utp_env/UTP-v0", profile="mini", config={"step_limit": 0})


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_env_checker_passes(env_id: str, mini_db_path: Path) -> None:
    env = gym.make(env_id, db_path=mini_db_path)
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_and_step_are_deterministic_under_a_seed(env_id: str, mini_db_path: Path) -> None:
    a = rollout(gym.make(env_id, db_path=mini_db_path), seed=123, steps=6)
    b = rollout(gym.make(env_id, db_path=mini_db_path), seed=123, steps=6)
    c = rollout(gym.make(env_id, db_path=mini_db_path), seed=124, steps=6)
    assert a == b
    assert a != c


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_unseeded_resets_draw_queries_from_the_env_generator(env_id: str, mini_db_path: Path) -> None:
    env = gym.make(env_id, db_path=mini_db_path)
    env.reset(seed=9)
    first = [env.reset()[1]["query"]["query_id"] for _ in range(5)]
    env.reset(seed=9)
    assert [env.reset()[1]["query"]["query_id"] for _ in range(5)] == first


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pickled_env_continues_identically(env_id: str, mini_db_path: Path) -> None:
    env = gym.make(env_id, db_path=mini_db_path).unwrapped
    env.reset(seed=5)
    env.step({"tool": "view_plan"})
    clone = pickle.loads(pickle.dumps(env))
    env.action_space.seed(1)
    clone.action_space.seed(1)
    for _ in range(3):
        action = env.action_space.sample()
        assert clone.action_space.sample() == action
        assert env.step(action) == clone.step(action)
    assert clone.episode.steps == env.episode.steps == 4


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_runs(env_id: str, mode: str, mini_db_path: Path) -> None:
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, db_path=str(mini_db_path))
    try:
        obs, info = envs.reset(seed=3)
        assert len(obs) == 2 and all(o.startswith("TASK") for o in obs)
        assert info["episode_id"][0] != info["episode_id"][1]
        for _ in range(3):
            obs, reward, terminated, truncated, _ = envs.step(envs.action_space.sample())
            assert len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
            assert list(reward) == [0.0, 0.0] and not terminated.any() and not truncated.any()
        obs, reward, terminated, *_ = envs.step(({"tool": "submit"}, {"tool": "view_plan"}))
        assert list(terminated) == [True, False]
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_step_limit_truncates(env_id: str, mini_db_path: Path) -> None:
    env = gym.make(env_id, db_path=mini_db_path, config={"step_limit": 2})
    env.reset(seed=0)
    assert env.step({"tool": "view_plan"})[2:4] == (False, False)
    _, _, terminated, truncated, info = env.step({"tool": "view_plan"})
    assert truncated and not terminated and info["termination_reason"] == "step_limit"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_info_and_errors(env_id: str, mini_db_path: Path) -> None:
    env = gym.make(env_id, db_path=mini_db_path).unwrapped
    with pytest.raises(gym.error.ResetNeeded):
        env.step({"tool": "view_plan"})
    obs, info = env.reset(seed=1, options={"split": "test"})
    assert info["query"]["split"] == "test" and info["db_hash"] == env.db.content_hash
    assert {t["function"]["name"] for t in info["tools"]} == set(env.tools)
    assert info["seed"] == 1 and len(info["episode_id"]) == 16
    assert info["query"]["query_id"] in obs and "HOW TO ACT" in obs
    with pytest.raises(ValueError, match="unknown option"):
        env.reset(options={"querry_id": "x"})
    with pytest.raises(ValueError, match="no query with query_id"):
        env.reset(options={"query_id": "nope"})
    with pytest.raises(ValueError, match="options\\['split'\\]='training' is not a split"):
        env.reset(options={"split": "training"})


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_full_sandbox_env_passes_the_checker(env_id: str) -> None:
    """On the embedded full sandbox the env checker passes (the step rate is measured by
    benchmarks/env_steps.py, never asserted in a test)."""
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
