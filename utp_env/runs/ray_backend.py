"""The Ray backend of `utp-env run` (`--backend ray`, the `ray` extra): each episode a Ray task,
at most four per CPU of the cluster in flight."""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from pathlib import Path

from utp_env.runs.config import RunConfig
from utp_env.runs.episode import run_episode
from utp_env.runs.local_pool import Records


def ray_temp_notice() -> str:
    """Where a Ray started by this run keeps its session files and logs, as the one line `run`
    prints before starting it: Ray's default (ray._common.utils.get_default_ray_temp_dir, 2.x):
    `$RAY_TMPDIR/ray`, else on Linux `$TMPDIR/ray`, else `/tmp/ray` on Linux and macOS, else the
    system temporary folder's `ray`."""

    if os.environ.get("RAY_TMPDIR"):
        root = os.environ["RAY_TMPDIR"]
    elif sys.platform.startswith("linux") and os.environ.get("TMPDIR"):
        root = os.environ["TMPDIR"]
    elif sys.platform.startswith(("linux", "darwin")):
        root = "/tmp"
    else:
        root = tempfile.gettempdir()
    return (f"utp-env run: notice: Ray keeps its session files and logs under {Path(root) / 'ray'} (set "
            "RAY_TMPDIR to choose another folder; delete old session_* folders there to free space)")


def run_on_ray(config: RunConfig, todo: list[tuple[str, int]], processes: int) -> Records:
    try:
        import ray
    except ImportError as exc:
        raise ValueError("the ray backend needs Ray: pip install 'utp-env[ray]'") from exc
    if not ray.is_initialized():
        if config.ray_address is None:
            print(ray_temp_notice(), file=sys.stderr)
        ray.init(address=config.ray_address, num_cpus=None if config.ray_address else processes,
                 include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_episode)
    queue = iter(todo)
    window = 4 * max(1, int(ray.cluster_resources().get("CPU", processes)))  # bounded, as locally
    pending = [remote.remote(config, qid, trial) for qid, trial in itertools.islice(queue, window)]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        pending.extend(remote.remote(config, qid, trial) for qid, trial in itertools.islice(queue, 1))
        yield ray.get(done[0])
