"""The data layer of utp-env: table schemas, the validated and indexed Database, the India
sandbox generator and the agent-facing lookup tools. Imports nothing from utp_env or agents."""

from utp_env.tools.database import Database, normalize, suggest
from utp_env.tools.errors import DataError, UnknownNameError

__all__ = ["DataError", "Database", "UnknownNameError", "normalize", "suggest"]
