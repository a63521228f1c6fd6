"""`python -m utp_env.rl.curve`: the learning curve of a level (utp_env/rl/curve/__init__.py)."""

from utp_env.rl.curve import main

main()
