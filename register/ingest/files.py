"""The files of an import: which ones, whether they may be imported at all, and their fingerprint.

Called by ``register.ingest.importer`` before anything is written, and by the demo loader
(``scan_file``: a source whose SHA-256 matches a finished batch is skipped). A file is checked by its
size (``DEFAULT_MAX_BYTES``, or ``HRI_IMPORT_MAX_MB``, or ``max_bytes=``) and its type, by extension
and by a sniff of its first bytes (a PNG renamed ``.jsonl`` is refused with ``ImportRejected``; so is
a ``.parquet`` without the Parquet magic). Text with a byte that is not UTF-8 is not refused: the
reader quarantines that line or row.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa

from register.errors import ImportRejected
from register.settings import default, settings

__all__ = ["DEFAULT_MAX_BYTES", "FORMATS", "MAX_BYTES_ENV", "check_file", "files_to_import", "open_parquet",
           "scan_file"]

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}
DEFAULT_MAX_BYTES = int(default("import_max_mb") * 1024 * 1024)  # HRI_IMPORT_MAX_MB overrides it
MAX_BYTES_ENV = "HRI_IMPORT_MAX_MB"
SNIFF_BYTES = 8192

_BINARY_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"), (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)"),
    (b"\x1f\x8b", "a gzip archive"), (b"PAR1", "a Parquet file"), (b"SQLite format 3\x00", "an SQLite database"),
    (b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"),
)


def _limit_bytes(max_bytes: int | None) -> int:
    if max_bytes is not None:
        return max_bytes
    return int(settings().import_max_mb * 1024 * 1024)  # a bad HRI_IMPORT_MAX_MB: InvalidSetting names it


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MB"


def check_file(path: Path, *, max_bytes: int | None = None) -> str:
    """Refuse a file that must not be imported at all; return its format (``jsonl``, ``csv``, ``parquet``).

    Raises ``ImportRejected`` naming the file: unsupported extension, over the size limit, binary
    content in a text format, or a ``.parquet`` that is not Parquet. An empty file is accepted (it
    imports as zero records and the report says so).
    """
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ImportRejected(f"{path.name}: unsupported file type {path.suffix or '(none)'!r}; "
                             f"expected one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise ImportRejected(f"{path.name}: no such file")
    limit = _limit_bytes(max_bytes)
    size = path.stat().st_size
    if size > limit:
        raise ImportRejected(f"{path.name} is {_mb(size)}, over the import limit of {_mb(limit)} "
                             f"(set {MAX_BYTES_ENV} to change the limit)")
    if size == 0:
        return fmt
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
        handle.seek(max(0, size - 4))
        tail = handle.read(4)
    kind = next((name for magic, name in _BINARY_MAGIC if head.startswith(magic)), None)
    if kind is None and head[8:12] == b"DUCK":
        kind = "a DuckDB database"
    if fmt == "parquet":
        if not (head.startswith(b"PAR1") and tail == b"PAR1"):
            raise ImportRejected(f"{path.name} is not a Parquet file" + (f": it looks like {kind}" if kind else ""))
        open_parquet(path)  # a readable footer, or refuse now rather than after the batch started
        return fmt
    hint = " (rename it .parquet)" if kind == "a Parquet file" else ""
    if kind:
        raise ImportRejected(f"{path.name} is not a {fmt.upper()} text file: it looks like {kind}{hint}")
    if b"\x00" in head:
        raise ImportRejected(f"{path.name} is not a {fmt.upper()} text file: it holds binary data (NUL bytes)")
    # Text that is not UTF-8 is not refused here: the line or row holding a bad byte is quarantined
    # ("not valid UTF-8 text"), wherever it is in the file, and every other record still imports.
    return fmt


def open_parquet(path: Path):
    """The Parquet file's reader (footer read), or ``ImportRejected`` when it cannot be read."""
    import pyarrow.parquet as pq  # on use: only Parquet files need the Parquet reader

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        raise ImportRejected(f"{path.name} is not a readable Parquet file: {error}") from error


def files_to_import(path: Path) -> tuple[list[Path], list[str]]:
    """The files of an import: the file itself, or a folder's supported files sorted by name."""
    if not path.exists():
        raise ImportRejected(f"{path}: no such file or folder")
    if not path.is_dir():
        return [path], []
    files, skipped = [], []
    for entry in sorted(path.iterdir()):
        if not entry.is_file() or entry.name.startswith("."):
            continue
        (files if entry.suffix.lower() in FORMATS else skipped).append(entry)
    if not files:
        raise ImportRejected(f"{path}: the folder holds no {', '.join(FORMATS)} files")
    notes = [f"skipped {p.name}: not a supported file type" for p in skipped]
    return files, notes


def scan_file(path: Path, fmt: str) -> tuple[str, int | None]:
    """SHA-256 of the file and, for JSON Lines, its number of records (non-blank lines) for progress."""
    digest = hashlib.sha256()
    count = 0
    with path.open("rb") as handle:
        if fmt == "jsonl":
            for line in handle:
                digest.update(line)
                if line.strip():
                    count += 1
            return digest.hexdigest(), count
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest(), None
