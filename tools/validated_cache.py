"""The validated cache: a database's columns as they were after validation, stored beside the
tables in `.validated.npz` and keyed by the hash of the table files (and the validation rules).

The file is an uncompressed zip archive of raw array bytes (no pickle, no `.npy` headers to
parse), each member's data aligned to 64 bytes: one member per array plus `__meta__`, a JSON
object holding the cache format, the key, the row counts and every member's dtype, shape and
CRC-32. Loading reads the file once, computes each array's CRC-32 over its bytes and compares it
with the archive's directory and with the value recorded at write time, so an array rewritten
after validation (a price set to -1e9, a city renamed) or damaged on disk is detected for the
cost of one checksum pass; the arrays are then views of that one buffer (no copy). Row counts,
category codes and city references are checked too.
`load` returns None when there is no cache for this key (absent, stale, another version) and
raises `CacheError` when the file is there but cannot be trusted; `Database.open` then prints
one notice and validates the CSV files again (tools/database.py).
"""

from __future__ import annotations

import json
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from utp_env.tools.columns import columns_of
from utp_env.tools.names import normalize
from utp_env.tools.schema import TABLES

VALIDATED_CACHE = ".validated.npz"
_CACHE_FORMAT = "utp-validated-2"
_META = "__meta__"
_ALIGN = 64
_PAD_ID = 0xA11E  # zip extra-field id of the padding that aligns each member's data
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra field length


class CacheError(Exception):
    """The validated cache exists but cannot be trusted; the message says why."""


def _text_array(values: list[str]) -> np.ndarray:
    return np.array(values, dtype=str) if values else np.empty(0, dtype="<U1")


def save(path: Path, key: str, tables: dict[str, tuple[dict[str, Any], int]],
         json_text: dict[str, dict[str, list[str]]]) -> None:
    """Remember validated columns (numbers as arrays, text as categories) of tables given as
    name -> (columns, row count), with each array's CRC-32; best effort, written atomically."""
    arrays: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for name, (table_columns, n) in tables.items():
        counts[name] = int(n)
        for column, values in table_columns.items():
            if isinstance(values, np.ndarray):
                arrays[f"{name}|{column}|num"] = values
                continue
            text = json_text[name].get(column, values)
            code_of: dict[str, int] = {}
            codes = np.fromiter((code_of.setdefault(v, len(code_of)) for v in text), dtype=np.int32, count=len(text))
            arrays[f"{name}|{column}|cat"] = _text_array(list(code_of))
            arrays[f"{name}|{column}|codes"] = codes
    members: dict[str, dict[str, Any]] = {}
    tmp = path / f"{VALIDATED_CACHE}.{os.getpid()}.tmp"
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for member, array in arrays.items():
                data = np.ascontiguousarray(array).tobytes()
                members[member] = {"dtype": array.dtype.str, "shape": list(array.shape), "crc": zlib.crc32(data)}
                info = zipfile.ZipInfo(member, date_time=(2000, 1, 1, 0, 0, 0))
                start = zf.fp.tell() + _LOCAL_HEADER.size + len(member.encode()) + 4  # type: ignore[union-attr]
                pad = -start % _ALIGN
                info.extra = struct.pack("<HH", _PAD_ID, pad) + bytes(pad)
                zf.writestr(info, data)
            meta = {"format": _CACHE_FORMAT, "key": key, "rows": counts, "members": members}
            zf.writestr(_META, json.dumps(meta, sort_keys=True))
        os.replace(tmp, path / VALIDATED_CACHE)
    except OSError:  # a read-only database directory simply is not cached
        tmp.unlink(missing_ok=True)


def load(path: Path, key: str) -> dict[str, tuple[dict[str, Any], int]] | None:
    """The validated tables (name -> (columns, row count)) remembered for exactly this key.

    None when there is no cache for this key; CacheError when the file cannot be trusted (bad
    CRC, truncated, rewritten, wrong row count, codes out of range, a city column naming a city
    that the cached cities table does not hold).
    """
    file = path / VALIDATED_CACHE
    try:
        st = os.stat(file)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise CacheError(f"{VALIDATED_CACHE} is not a regular file")
    try:
        with open(file, "rb") as fh:
            buffer = bytearray(os.fstat(fh.fileno()).st_size)
            if fh.readinto(buffer) != len(buffer):
                raise CacheError("the file changed while it was read")
            with zipfile.ZipFile(fh) as zf:
                if _META not in zf.NameToInfo and "__meta__.npy" in zf.NameToInfo:
                    return None  # written by the first version of the cache: validate again, quietly
                meta = json.loads(zf.read(_META))
                if not isinstance(meta, dict) or meta.get("format") != _CACHE_FORMAT:
                    return None  # another version of the cache: validate again, quietly
                if meta.get("key") != key:
                    return None  # the tables (or the rules) changed since it was written
                return _read_tables(zf, meta, buffer)
    except CacheError:
        raise
    except Exception as exc:  # any failure to read the cache means: validate the CSV files again
        raise CacheError(f"{type(exc).__name__}: {exc}") from exc


def _read_tables(zf: zipfile.ZipFile, meta: dict[str, Any],
                 buffer: bytearray) -> dict[str, tuple[dict[str, Any], int]]:
    members: dict[str, dict[str, Any]] = meta["members"]
    directory = {info.filename: info for info in zf.infolist()}
    if set(directory) != set(members) | {_META}:
        raise CacheError("the archive's members differ from the ones recorded when it was written")
    for member, info in directory.items():
        if member != _META and members[member]["crc"] != info.CRC:
            raise CacheError(f"array {member!r} was changed after validation (checksum mismatch)")

    view = memoryview(buffer)

    def array(member: str) -> np.ndarray:
        spec, info = members[member], directory[member]
        signature, name_length, extra_length = _LOCAL_HEADER.unpack_from(buffer, info.header_offset)
        start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        end = start + info.file_size
        if (signature != b"PK\x03\x04" or info.compress_type != zipfile.ZIP_STORED
                or info.compress_size != info.file_size or end > len(buffer)):
            raise CacheError(f"array {member!r} is not stored whole")
        if zlib.crc32(view[start:end]) != info.CRC:
            raise CacheError(f"array {member!r} is damaged (bad CRC-32)")
        dtype = np.dtype(spec["dtype"])
        if dtype.hasobject:
            raise CacheError(f"array {member!r} holds objects")
        return np.frombuffer(buffer, dtype=dtype, count=info.file_size // max(dtype.itemsize, 1),
                             offset=start).reshape(spec["shape"])

    tables: dict[str, tuple[dict[str, Any], int]] = {}
    cities: set[str] = set()
    known: set[str] = set()
    for name, spec in TABLES.items():
        n = meta["rows"][name]
        if not isinstance(n, int) or n < 0:
            raise CacheError(f"bad row count for {name}")
        columns: dict[str, Any] = {}
        for col in columns_of(spec.model):
            member = f"{name}|{col.name}"
            if col.kind in ("int", "float", "bool"):
                values = array(f"{member}|num")
                if values.shape != (n,):
                    raise CacheError(f"{member} has {values.shape} values for {n} rows")
                columns[col.name] = values
                continue
            categories = array(f"{member}|cat").tolist()
            codes = array(f"{member}|codes")
            if codes.shape != (n,):
                raise CacheError(f"{member} has {codes.shape} values for {n} rows")
            if n and (int(codes.min()) < 0 or int(codes.max()) >= len(categories)):
                raise CacheError(f"{member} points outside its {len(categories)} categories")
            if col.name in spec.city_columns:  # the reference check holds for cached data too
                if not known:
                    cities = set(tables["cities"][0]["city"])
                    known = {normalize(c) for c in cities}
                unknown = [c for c in categories if c not in cities and normalize(c) not in known]
                if unknown:
                    raise CacheError(f"{member} names unknown city {unknown[0]!r}")
            if col.kind == "json":  # validated when cached: parse each distinct text once
                categories = [None if c == "" and col.optional else col.adapter.validate_json(c)  # type: ignore[union-attr]
                              for c in categories]
            lookup = np.empty(len(categories), dtype=object)
            lookup[:] = categories
            columns[col.name] = lookup[codes].tolist()
        tables[name] = (columns, n)
    return tables
