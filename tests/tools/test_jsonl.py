"""`decode_json_line`: a JSONL line's value, or why it is not one, with the column a reader can find."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utp_env.tools.jsonl import decode_json_line


@pytest.mark.parametrize(("raw", "reason"), [
    (b'{"query_id": "q", "plan": [{"days": 1, "current_city": \n',
     "invalid JSON (the line ends after column 55 before the JSON does: cut off?)"),
    (b'{"a": 1, "b" 2}\n', "invalid JSON (Expecting ':' delimiter at column 14)"),
    (b'{"a": 1, "b" 2}\r\n', "invalid JSON (Expecting ':' delimiter at column 14)"),
    (b'{"a": \xff}\n', "not UTF-8 text (byte 0xff at column 7)"),
    (b'{"a": "b}\n', "invalid JSON (Unterminated string starting at column 7)"),
])
def test_a_bad_line_names_its_column(raw: bytes, reason: str) -> None:
    assert decode_json_line(raw) == (None, reason)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                    max_leaves=10), st.sampled_from(["", "\n", "\r\n"]))
def test_a_line_of_json_reads_back_whatever_its_ending(value: object, ending: str) -> None:
    assert decode_json_line((json.dumps(value) + ending).encode()) == (value, None)


@given(st.text(max_size=60).map(lambda t: '{"plan": ' + json.dumps(t)))
def test_a_line_cut_off_says_so_at_its_end(prefix: str) -> None:
    for cut in (len(prefix), len(prefix) - 1):
        value, reason = decode_json_line(prefix[:cut].encode() + b"\n")
        assert value is None and reason is not None and reason.startswith("invalid JSON")
        if cut == len(prefix):  # the object never closes
            assert reason == f"invalid JSON (the line ends after column {len(prefix)} before the JSON does: cut off?)"
