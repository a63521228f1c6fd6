"""The sandbox generator's version: bump it when a fresh build writes different tables, so that the
sandboxes cached on users' machines (`utp_env/tools/sandbox/cache.py`) are built again."""

GENERATOR_VERSION = "12"
