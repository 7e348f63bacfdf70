"""The test helper that reads a PDF's page text: every stream whole, whatever bytes its deflated data holds."""

from __future__ import annotations

import re
import zlib

from tests.helpers.pdf import pdf_stream_text


def _payload_ending_in(byte: bytes) -> tuple[bytes, bytes]:
    """A text whose deflated form ends in `byte` (found by counting; about one text in 256)."""
    for n in range(100_000):
        text = f"audit head at signing: event {n}".encode()
        data = zlib.compress(text)
        if data.endswith(byte):
            return text, data
    raise AssertionError("no payload found")


def _pdf(*payloads: bytes) -> bytes:
    objects = [b"%d 0 obj\n<</Filter /FlateDecode /Length %d>>\nstream\n%s\nendstream\nendobj\n" % (i, len(p), p)
               for i, p in enumerate(payloads, start=1)]
    return b"%PDF-1.3\n" + b"".join(objects) + b"%%EOF\n"


def test_a_stream_whose_deflated_data_ends_in_a_carriage_return_is_read_whole():
    text, data = _payload_ending_in(b"\r")
    pdf = _pdf(zlib.compress(b"first page "), data)
    assert pdf_stream_text(pdf) == b"first page " + text
    # the search for the keyword that the report test used before took the carriage return for the line end
    found = re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S)
    assert found[1] == data[:-1]


def test_a_stream_holding_the_endstream_keyword_is_read_whole():
    text = b"x" * 3
    raw = zlib.compress(text, 0)  # stored, not deflated: the bytes of the text appear as they are
    tricky = zlib.compress(b"before\nendstream\nafter", 0)
    assert pdf_stream_text(_pdf(raw, tricky)) == text + b"before\nendstream\nafter"
