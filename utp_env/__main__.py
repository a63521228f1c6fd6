import sys

from utp_env.cli import main

sys.exit(main())
