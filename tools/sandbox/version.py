"""The sandbox generator's version: bump it when a fresh build writes different tables, so that the
sandboxes cached on users' machines (`utp_env/tools/sandbox/cache.py`) are built again.

13: the tables generator 12 wrote on a machine without AVX-512, now on every machine (the build's sin,
cos, arcsin, exp and log are Python's `math`, not numpy's CPU-dependent code: tools/sandbox/common.py);
a full sandbox cached by generator 12 on an AVX-512 machine differed and is built again."""

GENERATOR_VERSION = "13"
