"""The prose of docs/DATA.md's sandbox section, one Markdown file per build stage (tools/sandbox/docs.py
renders it); a package only so that the wheel carries it as package data."""
