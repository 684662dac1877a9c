"""The host channel: a virtio-console tty in raw mode, framed (frames.py), with acknowledgements.

Host -> guest input is dropped by the emulator when the guest has no receive buffer queued, so
the host sends frames of at most MAX_HOST_FRAME bytes, keeps at most WINDOW of them
unacknowledged, and the agent acknowledges each frame as soon as it has read it.
"""

import errno
import os
import termios
import time
import tty

import frames

MAX_HOST_FRAME = 4096   # one guest receive buffer (a page)
WINDOW = 8              # the guest queues 16 receive buffers per port
MAX_MESSAGE = 16 * 1024 * 1024


class Port:
    """Reads host messages and queues guest frames. Not thread-safe; owned by the agent loop."""

    def __init__(self, path, log):
        self.log = log
        self.fd = self._open(path)
        self.reader = frames.FrameReader()
        self.out = bytearray()
        self.partial = None  # bytearray while a `chunk` sequence is being reassembled

    @staticmethod
    def _open(path):
        """Opens the port non-blocking, waiting up to a minute for the device to appear."""
        deadline = time.monotonic() + 60
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
                break
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENXIO, errno.ENODEV):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        if os.isatty(fd):
            tty.setraw(fd)  # no echo, no line editing, no CR/LF translation
            termios.tcflush(fd, termios.TCIFLUSH)  # drop anything sent before we listened
        return fd

    def send(self, header, payload=b""):
        self.out += frames.encode(header, payload)

    def flush(self):
        """Writes what the port takes now; the rest waits for writability."""
        while self.out:
            try:
                n = os.write(self.fd, self.out[:65536])
            except BlockingIOError:
                return
            del self.out[:n]

    def read_messages(self):
        """Reads what is available; returns complete host messages as (header, payload) pairs.

        Every frame with a `seq` is acknowledged here, as soon as it has been read: the ack tells
        the host a guest receive buffer is free again. `chunk` frames are reassembled into the
        message they carry. Raises SystemExit when the port was hung up.
        """
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        if not data:
            raise SystemExit("the host channel was hung up")
        self.reader.feed(data)
        messages = []
        for header, payload, _size in self.reader.frames():
            if "seq" in header:
                self.send({"type": "ack", "seq": header["seq"]})
            if header.get("type") == "chunk":
                messages.extend(self._add_chunk(header, payload))
            else:
                messages.append((header, payload))
        if self.reader.skipped:
            self.log("skipped", self.reader.skipped, "bytes of garbage on the port")
            self.send({"type": "error", "code": "bad_frame",
                       "message": "skipped %d bytes that were not frames" % self.reader.skipped})
            self.reader.skipped = 0
        return messages

    def _add_chunk(self, header, payload):
        if self.partial is None:
            self.partial = bytearray()
        self.partial += payload
        if len(self.partial) > MAX_MESSAGE + 64 * 1024:
            self.partial = None
            self.send({"type": "error", "code": "too_large",
                       "message": "a chunked message exceeded %d bytes" % MAX_MESSAGE})
            return []
        if not header.get("last"):
            return []
        inner = frames.FrameReader()
        inner.feed(self.partial)
        self.partial = None
        return [(h, p) for h, p, _ in inner.frames()]
