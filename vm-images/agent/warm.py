"""The agent's side of the warm Python runner (pyrunner.py): starts it, hands it snippets with
their stdio fds, and returns its answers. A runner that dies is restarted a second later."""

import json
import os
import socket
import sys
import time

from spawn import spawn

AGENT_DIR = os.path.dirname(os.path.abspath(__file__))
RESTART_DELAY = 1.0


class WarmPython:
    def __init__(self, log):
        self.log = log
        self.pid = None           # the runner process (the agent reaps it)
        self.sock = None
        self.ready = False        # the runner said `ready`: snippets can go to it
        self.restart_at = 0.0     # when a lost runner may be started again

    def start(self, env):
        """Starts the runner; returns its socket, for the agent's selector."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Imported rather than run as a file, so its byte-compiled form is used.
        launch = "import sys; sys.path.insert(0, %r); import pyrunner; pyrunner.main()" % AGENT_DIR
        null = os.open("/dev/null", os.O_RDWR)
        try:
            self.pid = spawn([sys.executable, "-c", launch, str(child.fileno())], (null, 2, 2),
                             "/", env, pass_fds=[child.fileno()])
        finally:
            os.close(null)
            child.close()
        parent.setblocking(False)
        self.sock = parent
        self.ready = False
        self.log("python runner started, pid", self.pid)
        return parent

    def stop(self, exited):
        """Forgets a lost runner, killing it unless it has `exited` (been reaped), and schedules
        the restart."""
        self.log("python runner lost")
        self.sock.close()
        self.sock = None
        self.ready = False
        if not exited:
            try:
                os.killpg(self.pid, 9)
            except ProcessLookupError:
                pass
        self.pid = None
        self.restart_at = time.monotonic() + RESTART_DELAY

    def messages(self):
        """Returns the runner's pending messages, or None when it has gone."""
        found = []
        while True:
            try:
                data = self.sock.recv(1024 * 1024)
            except BlockingIOError:
                return found
            if not data:
                return None
            msg = json.loads(data)
            if msg.get("op") == "ready":
                self.ready = True
            found.append(msg)

    def run(self, req_id, source, args, cwd, env, stdio_fds):
        """Hands a snippet to the runner; the code travels in a memfd (it may be megabytes).
        Returns the read end of a pipe the child writes its exit code to as it ends."""
        code_fd = os.memfd_create("snippet")
        status_r, status_w = os.pipe()
        try:
            view = memoryview(source.encode("utf-8"))
            while view:
                view = view[os.write(code_fd, view):]
            os.lseek(code_fd, 0, os.SEEK_SET)
            msg = {"op": "run", "id": req_id, "args": args, "cwd": cwd, "env": env}
            socket.send_fds(self.sock, [json.dumps(msg).encode("utf-8")],
                            list(stdio_fds) + [code_fd, status_w])
        except BaseException:
            os.close(status_r)
            raise
        finally:
            os.close(code_fd)
            os.close(status_w)
        return status_r

    def preload(self, req_id, modules):
        self.sock.send(json.dumps({"op": "preload", "id": req_id, "modules": modules}).encode("utf-8"))
