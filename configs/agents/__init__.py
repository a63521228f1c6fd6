"""Shipped agents configs (YAML); a package only so that the wheel carries them as package data."""
