"""Read the page text a PDF carries, for asserting what a generated report says."""

from __future__ import annotations

import re
import zlib

# fpdf2 writes each stream as `<</Filter /FlateDecode /Length N>>` then `stream`, a line end and N bytes.
_STREAM = re.compile(rb"/Length (\d+)\b[^>]*>>\s*stream\r?\n", re.S)


def pdf_stream_text(pdf: bytes) -> bytes:
    """The deflated streams of a PDF, inflated and joined.

    Each stream is read by its declared length: deflated bytes may end in a carriage return or hold any other
    byte, so searching for the `endstream` keyword would cut some of them short.
    """
    parts = []
    for match in _STREAM.finditer(pdf):
        data = pdf[match.end():match.end() + int(match.group(1))]
        parts.append(zlib.decompress(data))
    return b"".join(parts)
