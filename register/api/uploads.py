"""A file sent to the API, received to a private temporary folder within the import size limit.

``POST /api/v1/imports`` takes the file as the raw body (its format from ``?format=``, the ``?filename=``'s
extension or the Content-Type) or as a ``multipart/form-data`` field named ``file``. The bytes are streamed to
disk and counted as they arrive: a body over ``HRI_IMPORT_MAX_MB`` is refused with 413 before it is all read,
and nothing of it is imported. The file keeps a safe version of its name, which becomes the batch's source name.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from starlette.requests import Request

from register.api.errors import ApiError
from register.settings import settings

__all__ = ["CONTENT_TYPES", "EXTENSIONS", "Upload", "UploadReceiver"]

# the format names of ``?format=`` -> the extension the importer recognises (register.ingest.files.FORMATS)
EXTENSIONS = {"jsonl": ".jsonl", "json": ".json", "csv": ".csv", "parquet": ".parquet"}
CONTENT_TYPES = {"application/x-ndjson": "jsonl", "application/jsonl": "jsonl", "application/json": "json",
                 "text/csv": "csv", "application/vnd.apache.parquet": "parquet", "application/x-parquet": "parquet"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = 1 << 20


@dataclass
class Upload:
    """The received file (``path``); ``discard`` removes it and its folder."""

    path: Path
    size: int

    def discard(self) -> None:
        shutil.rmtree(self.path.parent, ignore_errors=True)


def _limit() -> int:
    return int(settings().import_max_mb * 1024 * 1024)


def _too_large(size: int | None, limit: int) -> ApiError:
    said = f" is {size:,} bytes," if size is not None else " is"
    return ApiError(413, "too_large", f"the file{said} over the import limit of {limit:,} bytes (HRI_IMPORT_MAX_MB)")


def _safe_stem(name: str | None) -> str:
    stem = _UNSAFE.sub("-", Path(name or "").stem).strip(".-")[:80]
    return stem or "api-upload-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S")


def _format_of(declared: str | None, filename: str | None, content_type: str) -> str:
    if declared:
        if declared not in EXTENSIONS:
            raise ApiError(422, "invalid", f"format {declared!r} is not one of {', '.join(EXTENSIONS)}", "format")
        return declared
    suffix = Path(filename or "").suffix.lower().lstrip(".")
    if suffix in EXTENSIONS:
        return suffix
    media = content_type.split(";")[0].strip().lower()
    if media in CONTENT_TYPES:
        return CONTENT_TYPES[media]
    raise ApiError(422, "invalid", "say the file's format: ?format=jsonl|json|csv|parquet, a filename with one of "
                                   "those extensions, or a Content-Type such as application/x-ndjson or text/csv",
                   "format")


async def _saved(chunks: AsyncIterator[bytes], name: str, limit: int) -> Upload:
    """Write ``chunks`` to ``name`` in a private temporary folder, counting as they arrive: over ``limit`` the folder
    is removed and 413 raised before the rest is read."""
    folder = Path(tempfile.mkdtemp(prefix="hri-api-import-"))
    path, size = folder / name, 0
    try:
        with path.open("wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise _too_large(None, limit)
                out.write(chunk)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Upload(path, size)


class UploadReceiver:
    """Receives the file of an import request (see the module docstring)."""

    async def receive(self, request: Request) -> Upload:
        limit = _limit()
        declared_size = request.headers.get("content-length")
        if declared_size is not None and declared_size.isdigit() and int(declared_size) > limit:
            raise _too_large(int(declared_size), limit)
        content_type = request.headers.get("content-type", "")
        query = request.query_params
        if content_type.lower().startswith("multipart/form-data"):
            return await self._multipart(request, query.get("format"), limit)
        fmt = _format_of(query.get("format"), query.get("filename"), content_type)
        return await _saved(request.stream(), _safe_stem(query.get("filename")) + EXTENSIONS[fmt], limit)

    async def _multipart(self, request: Request, declared: str | None, limit: int) -> Upload:
        form = await request.form(max_files=1, max_fields=10)
        try:
            item = form.get("file")
            if item is None or isinstance(item, str):
                raise ApiError(422, "invalid", "a multipart upload needs one file field named 'file'", "file")
            fmt = _format_of(declared, item.filename, item.content_type or "")

            async def parts() -> AsyncIterator[bytes]:
                while chunk := await item.read(_CHUNK):
                    yield chunk

            return await _saved(parts(), _safe_stem(item.filename) + EXTENSIONS[fmt], limit)
        finally:
            await form.close()
