"""Frame encoding and incremental decoding for the guest agent's channel (see vm-images/README.md).

A frame is a 12-byte prefix -- the magic b"SDA1", the header length and the payload length as
unsigned 32-bit big-endian integers -- then a UTF-8 JSON object (the header), then raw payload bytes.
"""

import json
import struct

MAGIC = b"SDA1"
PREFIX = struct.Struct(">4sII")
MAX_HEADER = 64 * 1024
MAX_PAYLOAD = 16 * 1024 * 1024


def encode(header, payload=b""):
    """Returns one frame as bytes. `header` must be JSON-serialisable."""
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return PREFIX.pack(MAGIC, len(head), len(payload)) + head + bytes(payload)


class FrameReader:
    """Turns a byte stream into (header, payload, size) tuples.

    Garbage before a frame (bytes that do not start with the magic, or a prefix with absurd
    lengths, or a header that is not a JSON object) is skipped up to the next magic and counted
    in `skipped`, so one corrupt frame cannot wedge the channel.
    """

    def __init__(self):
        self._buf = bytearray()
        self.skipped = 0

    def feed(self, data):
        self._buf += data

    def frames(self):
        buf = self._buf
        while True:
            start = buf.find(MAGIC)
            if start < 0:
                keep = len(MAGIC) - 1  # a magic may be split across reads
                if len(buf) > keep:
                    self.skipped += len(buf) - keep
                    del buf[: len(buf) - keep]
                return
            if start > 0:
                self.skipped += start
                del buf[:start]
            if len(buf) < PREFIX.size:
                return
            _, head_len, payload_len = PREFIX.unpack_from(buf)
            if head_len > MAX_HEADER or payload_len > MAX_PAYLOAD:
                self._skip_magic()
                continue
            end = PREFIX.size + head_len + payload_len
            if len(buf) < end:
                return
            try:
                header = json.loads(bytes(buf[PREFIX.size : PREFIX.size + head_len]))
            except ValueError:
                header = None
            if not isinstance(header, dict):
                self._skip_magic()
                continue
            payload = bytes(buf[PREFIX.size + head_len : end])
            del buf[:end]
            yield header, payload, end

    def _skip_magic(self):
        self.skipped += len(MAGIC)
        del self._buf[: len(MAGIC)]
