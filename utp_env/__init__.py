"""utp-env: a gymnasium environment and benchmark for uncertainty-aware travel planning in India."""

__version__ = "0.1.0"
