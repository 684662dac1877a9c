"""Runs the guest agent (vm-images/agent) on this machine for tests: the agent gets one end of a
pseudo-terminal as its port, as /dev/hvc1 is a tty in the guest, and this process relays the
other end to its own stdin and stdout. The agent's log goes to stderr.

    python3 agent-on-host.py AGENT_DIR
"""

import os
import pty
import selectors
import subprocess
import sys

agent_dir = sys.argv[1]
master, slave = pty.openpty()
agent = subprocess.Popen(
    [sys.executable, "-S", "-c",
     "import sys; sys.path.insert(0, %r); import agent; agent.main()" % agent_dir,
     "--port", os.ttyname(slave)],
    stdin=subprocess.DEVNULL, stdout=sys.stderr, cwd="/")
# The slave stays open here: with no process holding it before the agent opens it, reading the
# master would fail (EIO).
sel = selectors.DefaultSelector()
sel.register(0, selectors.EVENT_READ)
sel.register(master, selectors.EVENT_READ)
try:
    while agent.poll() is None:
        for key, _ in sel.select(0.5):
            try:
                data = os.read(key.fd, 65536)
            except OSError:  # the agent closed its end
                data = b""
            if not data:
                raise SystemExit(0)
            target = master if key.fd == 0 else 1
            view = memoryview(data)
            while view:
                view = view[os.write(target, view):]
finally:
    agent.kill()
