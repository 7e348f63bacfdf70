"""The files of an import: which ones, whether they may be imported at all, and their fingerprint.

Called by ``register.ingest.importer`` before anything is written, and by the demo loader
(``scan_file``: a source whose SHA-256 matches a finished batch is skipped). A file is checked by its
size (``DEFAULT_MAX_BYTES``, or ``HRI_IMPORT_MAX_MB``, or ``max_bytes=``) and its type, by extension
and by a sniff of its first bytes (a PNG renamed ``.jsonl`` is refused with ``ImportRejected``; so is
a ``.parquet`` without the Parquet magic); ``scan_file``, which reads every byte for the fingerprint
anyway, also refuses a text file with a NUL byte anywhere and a CSV with a quoted field that is never
closed -- files that would otherwise be half imported. Text with a byte that is not UTF-8 is not
refused: the reader quarantines that line or row. A folder imports its supported regular files; every other
entry is named in the report's notes with why it was skipped, and a link or an entry that is not a regular file
(a FIFO, a device, a file with a second name elsewhere) is judged by ``lstat`` as the inbox judges it
(``register.ingest.regular_files``) and never read. Every read of a file of an import opens it without
following a link (``regular_files.open_file``): a link swapped in after the folder was listed is refused.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pyarrow as pa

from hri_core.readers import unclosed_quote_line
from register.errors import ImportRejected
from register.ingest.regular_files import open_file, refusal
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
    (b"\xff\xfe", "UTF-16 text (save it as UTF-8)"), (b"\xfe\xff", "UTF-16 text (save it as UTF-8)"),
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
    with open_file(path) as handle:  # not through a link; a FIFO or a device is refused unread
        size = os.fstat(handle.fileno()).st_size
        limit = _limit_bytes(max_bytes)
        if size > limit:
            raise ImportRejected(f"{path.name} is {_mb(size)}, over the import limit of {_mb(limit)} "
                                 f"(set {MAX_BYTES_ENV} to change the limit)")
        head = handle.read(SNIFF_BYTES)
        handle.seek(max(0, size - 4))
        tail = handle.read(4)
    return _check_content(path, fmt, size, head, tail)


def _check_content(path: Path, fmt: str, size: int, head: bytes, tail: bytes) -> str:
    if size == 0:  # an empty text file is zero records (the report says so); an empty .parquet is no Parquet
        if fmt == "parquet":
            raise ImportRejected(f"{path.name} is empty: not a Parquet file")
        return fmt
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
        raise ImportRejected(f"{path.name} is not a {fmt.upper()} text file: it holds binary data (NUL bytes; "
                             "UTF-16 text without a byte-order mark looks like this too: save it as UTF-8)")
    # Text that is not UTF-8 is not refused here: the line or row holding a bad byte is quarantined
    # ("not valid UTF-8 text"), wherever it is in the file, and every other record still imports.
    return fmt


def open_parquet(path: Path):
    """The Parquet file's reader (footer read), or ``ImportRejected`` when it cannot be read."""
    import pyarrow.parquet as pq  # on use: only Parquet files need the Parquet reader

    handle = open_file(path)
    try:
        return pq.ParquetFile(handle)  # the reader keeps the handle open; it closes with the reader
    except (pa.ArrowException, OSError) as error:
        handle.close()
        raise ImportRejected(f"{path.name} is not a readable Parquet file: {error}") from error


def files_to_import(path: Path) -> tuple[list[Path], list[str]]:
    """The files of an import: the file itself, or a folder's supported files sorted by name.

    Everything else in a folder is named in the notes (so in the report) with why it was skipped: a
    subfolder (not imported recursively), a hidden file, a file of another type, and -- refused unread, judged
    by ``lstat`` as the inbox judges its entries -- a symbolic link (to a file or a folder), a FIFO, a socket,
    a device or a file with a second name (a hard link). A file named on its own may be a link: the person
    importing named it, and its target is imported.
    """
    if not path.exists():
        raise ImportRejected(f"{path}: no such file or folder")
    if not path.is_dir():
        return [path.resolve() if path.is_symlink() else path], []
    files, notes = [], []
    for entry in sorted(path.iterdir()):
        info = os.lstat(entry)
        if stat.S_ISDIR(info.st_mode):
            notes.append(f"skipped {entry.name}/: a folder (folders are not imported recursively; name it to "
                         "import it)")
        elif (problem := refusal(info)) is not None:
            notes.append(f"refused {entry.name}: {problem}: not read")
        elif entry.name.startswith("."):
            notes.append(f"skipped {entry.name}: a hidden file (its name starts with a dot)")
        elif entry.suffix.lower() not in FORMATS:
            notes.append(f"skipped {entry.name}: not a supported file type ({', '.join(FORMATS)})")
        else:
            files.append(entry)
    if not files:
        raise ImportRejected(f"{path}: the folder holds no {', '.join(FORMATS)} files")
    return files, notes


def scan_file(path: Path, fmt: str) -> tuple[str, int | None]:
    """SHA-256 of the file and, for JSON Lines, its number of records (non-blank lines) for progress.

    The same pass refuses (``ImportRejected``, before anything is written) a text file that would
    otherwise be half imported: a NUL byte anywhere (binary data or a damaged file: the head check of
    ``check_file`` sees only the first bytes), or a CSV whose last quoted field is never closed (the
    reader would swallow every row after it into one value). An odd number of quote characters is the
    cheap sign; only then is the file parsed a second time to find the line (``unclosed_quote_line``).
    """
    digest = hashlib.sha256()
    count = quotes = offset = 0
    text = fmt in ("jsonl", "csv")
    with open_file(path) as handle:
        blocks = handle if fmt == "jsonl" else iter(lambda: handle.read(1 << 20), b"")
        for block in blocks:
            digest.update(block)
            if text and b"\x00" in block:
                _refuse_nul(path, fmt, offset + block.index(b"\x00"))
            if fmt == "jsonl":
                count += bool(block.strip())
            elif fmt == "csv":
                quotes += block.count(b'"')
            offset += len(block)
    if quotes % 2:
        with open_file(path, "r", encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
            line = unclosed_quote_line(handle)
        if line is not None:
            raise ImportRejected(f"{path.name}: line {line}: a quoted field opened here is never closed, so every "
                                 "row after it would become part of one value; close the quote (a quote inside "
                                 "a quoted field is written twice: \"\"). Nothing was imported")
    return digest.hexdigest(), (count if fmt == "jsonl" else None)


def _refuse_nul(path: Path, fmt: str, offset: int) -> None:
    with open_file(path) as handle:
        line = handle.read(offset).count(b"\n") + 1
    raise ImportRejected(f"{path.name}: line {line}: a NUL byte (byte {offset:,}): binary data or a damaged file, "
                         f"not {fmt.upper()} text. Nothing was imported")
