"""Stackdocs guest agent: runs commands for the host over a virtio-console port (/dev/hvc1).

One single-threaded select loop owns the port (port.py), every child's pipes and the warm
Python runner (warm.py, pyrunner.py). The wire protocol is specified in vm-images/README.md,
"Guest agent protocol". Started, and restarted when it exits, by busybox init; logs to stderr.
"""

import time

STARTED_AT = time.clock_gettime(time.CLOCK_BOOTTIME)  # before the imports, which are slow at boot

import binascii  # noqa: E402  (the imports below are timed)
import fcntl
import os
import selectors
import signal
import struct
import sys
import termios

from port import MAX_HOST_FRAME, WINDOW, Port
from shell import SpareShell
from spawn import spawn
from warm import WarmPython

VERSION = 1
READ_SIZE = 32 * 1024
OUT_HIGH_WATER = 1024 * 1024  # stop reading children while this much waits for the host
EXIT_DRAIN_SECONDS = 0.25     # after exit, how long leftover holders of the pipes may keep them
SPARE_RETRY_SECONDS = 5.0     # after a spare shell died unused, or could not be started
MIN_SEED_BYTES, MAX_SEED_BYTES = 32, 512
RNDADDENTROPY = 0x40085203  # _IOW('R', 3, int[2]): add bytes to the input pool, credited
RNDRESEEDCRNG = 0x5207      # _IO('R', 7): reseed the generator from the pool now
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "USER": "root",
    "LOGNAME": "root",
    "SHELL": "/bin/bash",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "MPLBACKEND": "Agg",
}


def log(*parts):
    uptime = time.clock_gettime(time.CLOCK_BOOTTIME)
    print("[%9.3f]" % uptime, *parts, file=sys.stderr, flush=True)


def boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


class RequestError(Exception):
    """A request that cannot be served; becomes an `error` frame with this code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Exec:
    """One command or snippet: its pipes, its deadline and how it ended."""

    def __init__(self, req_id, timeout):
        self.id = req_id
        self.pid = None
        self.runner = None        # "warm" or "cold" for Python snippets
        self.status = None        # exit code, or minus the signal that killed it
        self.started = time.monotonic()
        self.exited_at = None
        self.deadline = self.started + float(timeout) if timeout else None
        self.timed_out = False
        self.cancelled = False
        self.pending_signal = None  # a cancel that came before the pid was known
        self.out_fds = {}           # fd -> "stdout" | "stderr"
        self.status_fd = None       # a warm snippet's exit code comes on this pipe
        self.stdin_fd = None
        self.stdin_buf = bytearray()
        self.stdin_eof = False

    def exit_status(self, status):
        if self.status is None:  # a warm snippet's code may come both from itself and the runner
            self.status = status
            self.exited_at = time.monotonic()

    def kill(self, sig):
        """Signals the whole process group (children run in their own session)."""
        if self.pid is None:
            self.pending_signal = sig
            return
        if self.status is not None:
            return
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            try:  # the child may not have called setsid yet
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def exit_frame(self):
        code, sig = self.status, None
        if code < 0:
            try:
                code, sig = None, signal.Signals(-code).name
            except ValueError:
                code, sig = None, "SIG%d" % -code
        return {"type": "exit", "id": self.id, "code": code, "signal": sig,
                "timedOut": self.timed_out, "cancelled": self.cancelled,
                "durationMs": round((self.exited_at - self.started) * 1000)}


class Agent:
    def __init__(self, port_path):
        self.port = Port(port_path, log)
        self.sel = selectors.DefaultSelector()
        self.execs = {}
        self.children = {}     # pid -> Exec, for the processes this agent started and reaps
        self.warm = WarmPython(log)
        self.preloads = set()  # request ids waiting for the runner's `preloaded`
        self.spare = None      # a SpareShell waiting for the next command
        self.spare_at = 0.0    # when the next spare may be started
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        self.wake_fd = wake_r
        self.sel.register(self.port.fd, selectors.EVENT_READ, ("port", None))
        self.sel.register(wake_r, selectors.EVENT_READ, ("wake", None))

    # ---- requests ---------------------------------------------------------------------------

    def handle(self, header, payload):
        """Serves one host message. Never raises for a bad request: it answers `error`."""
        kind = header.get("type")
        req_id = header.get("id")
        try:
            if kind == "ping":
                self.port.send({"type": "pong", "id": req_id, **self.status_info()})
            elif kind == "exec":
                self.start_exec(req_id, header, payload)
            elif kind == "stdin":
                self.feed_stdin(req_id, header, payload)
            elif kind == "cancel":
                ex = self.execs.get(req_id)
                if ex and ex.status is None:  # an exec that already ended: nothing to do
                    ex.cancelled = True
                    ex.kill(self.parse_signal(header.get("signal", "SIGKILL")))
            elif kind == "settime":
                time.clock_settime_ns(time.CLOCK_REALTIME, int(header["epochMs"]) * 1000000)
                if header.get("seed") is not None:
                    self.reseed(header["seed"])
                self.port.send({"type": "result", "id": req_id, "reseeded": header.get("seed") is not None})
            elif kind == "resize":
                self.resize(header)
                self.port.send({"type": "result", "id": req_id})
            elif kind == "settle":
                self.settle()
                self.port.send({"type": "result", "id": req_id})
            elif kind == "preload":
                if not self.warm.ready:
                    raise RequestError("runner_unavailable", "the Python runner is not running")
                self.preloads.add(req_id)
                self.warm.preload(req_id, [str(m) for m in header.get("modules") or []])
            else:
                raise RequestError("unknown_type", "unknown request type %r" % (kind,))
        except RequestError as exc:
            self.port.send({"type": "error", "id": req_id, "code": exc.code, "message": str(exc)})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.port.send({"type": "error", "id": req_id, "code": "bad_request",
                            "message": "%s: %s" % (type(exc).__name__, exc)})

    def status_info(self):
        return {
            "version": VERSION,
            "bootId": boot_id(),
            "time": int(time.time() * 1000),
            "uptime": time.clock_gettime(time.CLOCK_BOOTTIME),
            "running": list(self.execs),
            "pythonWarm": self.warm.ready,
            "maxFrame": MAX_HOST_FRAME,
            "window": WINDOW,
        }

    @staticmethod
    def parse_signal(name):
        try:
            return signal.Signals[name] if isinstance(name, str) else signal.Signals(int(name))
        except (KeyError, ValueError):
            raise RequestError("bad_request", "unknown signal %r" % (name,))

    @staticmethod
    def exec_env(header):
        env = dict(BASE_ENV)
        for key, value in (header.get("env") or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[str(key)] = str(value)
        return env

    def start_exec(self, req_id, header, payload):
        if req_id is None or req_id in self.execs:
            raise RequestError("bad_request", "exec needs an id that is not in use")
        cwd = header.get("cwd") or "/root"
        if not os.path.isdir(cwd):
            raise RequestError("bad_cwd", "no such directory: %s" % cwd)
        stdin_mode = header.get("stdin", "none")
        if stdin_mode not in ("none", "pipe"):
            raise RequestError("bad_request", "stdin must be 'none' or 'pipe'")
        if "python" in header:
            argv = None
        elif "argv" in header:
            argv = [str(a) for a in header["argv"]]
        elif "command" in header:
            argv = ["/bin/bash", "-c", str(header["command"])]
        else:
            raise RequestError("bad_request", "exec needs one of command, argv, python")

        env = self.exec_env(header)
        ex = Exec(req_id, header.get("timeout"))
        from_command = "python" not in header and "argv" not in header
        if from_command and self.use_spare(ex, header, env, cwd):
            self.register_exec(ex)
            return
        if stdin_mode == "pipe":
            child_in, ex.stdin_fd = os.pipe()
            os.set_blocking(ex.stdin_fd, False)
            ex.stdin_buf += payload
            ex.stdin_eof = bool(header.get("eof"))
        else:
            child_in = os.open("/dev/null", os.O_RDONLY)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        child_fds = (child_in, out_w, err_w)
        try:
            self.spawn(ex, argv, header, env, cwd, child_fds)
        except OSError as exc:
            for fd in (out_r, err_r) + ((ex.stdin_fd,) if ex.stdin_fd is not None else ()):
                os.close(fd)
            raise RequestError("spawn_failed", "%s: %s" % (type(exc).__name__, exc))
        finally:
            for fd in child_fds:
                os.close(fd)
        ex.out_fds = {out_r: "stdout", err_r: "stderr"}
        self.register_exec(ex)

    def register_exec(self, ex):
        for fd in ex.out_fds:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, ("out", ex))
        self.execs[ex.id] = ex
        if ex.pid is not None:  # warm snippets announce themselves when the runner forked
            self.port.send({"type": "started", "id": ex.id, "pid": ex.pid,
                            **({"runner": ex.runner} if ex.runner else {})})
        self.update_stdin(ex)

    def use_spare(self, ex, header, env, cwd):
        """Runs a command on the spare shell when it can; False means: start a fresh bash."""
        spare = self.spare
        if spare is None or not spare.can_run(header, env):
            return False
        self.spare = None
        try:
            spare.run(str(header["command"]), cwd, env)
        except OSError as exc:  # it died unnoticed: reap() will collect it
            log("spare shell unusable:", exc)
            spare.close()
            for fd in spare.fds:
                os.close(fd)
            return False
        ex.pid = spare.pid
        ex.out_fds = {spare.fds[0]: "stdout", spare.fds[1]: "stderr"}
        self.children[ex.pid] = ex
        return True

    def start_spare(self):
        try:
            self.spare = SpareShell(BASE_ENV)
        except OSError as exc:
            log("could not start a spare shell:", exc)
            self.spare_at = time.monotonic() + SPARE_RETRY_SECONDS
            return

    def spare_lost(self):
        self.spare.close()
        for fd in self.spare.fds:
            os.close(fd)
        self.spare = None
        self.spare_at = time.monotonic() + SPARE_RETRY_SECONDS

    def spawn(self, ex, argv, header, env, cwd, child_fds):
        """Starts a command in its own session; a Python snippet goes to the warm runner when it
        is up, or else to a fresh `python3 -c` (marked "cold" in `started`)."""
        if argv is None:
            args = [str(a) for a in header.get("args") or []]
            if self.warm.ready:
                ex.runner = "warm"
                ex.status_fd = self.warm.run(ex.id, str(header["python"]), args, cwd, env, child_fds)
                os.set_blocking(ex.status_fd, False)
                self.sel.register(ex.status_fd, selectors.EVENT_READ, ("status", ex))
                return
            ex.runner = "cold"
            argv = ["python3", "-c", str(header["python"])] + args
        ex.pid = spawn(argv, child_fds, cwd, env)
        self.children[ex.pid] = ex

    def feed_stdin(self, req_id, header, payload):
        ex = self.execs.get(req_id)
        if ex is None or (ex.stdin_fd is None and not ex.stdin_eof):
            raise RequestError("unknown_id", "no exec %r with stdin open" % (req_id,))
        if ex.stdin_eof:
            return  # stdin already closed: later data is dropped, as a closed pipe would
        ex.stdin_buf += payload
        ex.stdin_eof = bool(header.get("eof"))
        self.update_stdin(ex)

    def update_stdin(self, ex):
        """Writes what the child's stdin pipe takes; closes it at eof or once the child ended."""
        if ex.stdin_fd is None:
            return
        try:
            while ex.stdin_buf:
                n = os.write(ex.stdin_fd, ex.stdin_buf[:65536])
                del ex.stdin_buf[:n]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            ex.stdin_buf.clear()
            ex.stdin_eof = True
        registered = self.sel.get_map().get(ex.stdin_fd) is not None
        if (not ex.stdin_buf and ex.stdin_eof) or ex.status is not None:
            if registered:
                self.sel.unregister(ex.stdin_fd)
            os.close(ex.stdin_fd)
            ex.stdin_fd = None
        elif ex.stdin_buf and not registered:
            self.sel.register(ex.stdin_fd, selectors.EVENT_WRITE, ("stdin", ex))
        elif not ex.stdin_buf and registered:
            self.sel.unregister(ex.stdin_fd)

    @staticmethod
    def reseed(seed):
        """Mixes the host's random bytes into the kernel's pool and reseeds its generator now.
        Every wake of one saved state (every user's first start wakes the same image) would
        otherwise hand out the same "random" bytes: keys, TLS secrets, temporary names."""
        try:
            # binascii rather than base64, whose import (re, enum) costs ~0.3 s at boot.
            data = binascii.a2b_base64(seed.encode("ascii"), strict_mode=True)
        except (binascii.Error, AttributeError, UnicodeEncodeError) as exc:
            raise RequestError("bad_request", "seed is not base64: %s" % exc)
        if not MIN_SEED_BYTES <= len(data) <= MAX_SEED_BYTES:
            raise RequestError("bad_request", "seed must be %d to %d bytes, not %d"
                               % (MIN_SEED_BYTES, MAX_SEED_BYTES, len(data)))
        try:
            fd = os.open("/dev/urandom", os.O_WRONLY)
            try:
                fcntl.ioctl(fd, RNDADDENTROPY, struct.pack("ii", len(data) * 8, len(data)) + data)
                fcntl.ioctl(fd, RNDRESEEDCRNG)
            finally:
                os.close(fd)
        except OSError as exc:
            raise RequestError("reseed_failed", "the kernel's random generator was not reseeded: %s" % exc)

    @staticmethod
    def settle():
        """Before the host saves the computer: the disk written through and the kernel's caches
        let go (freed pages are zeroed, init_on_free, so the saved state leaves them out). Done
        here rather than by `sync; echo 3 > ...` on a shell: that costs a process or two."""
        os.sync()
        try:
            with open("/proc/sys/vm/drop_caches", "w") as caches:
                caches.write("3")
        except OSError as exc:
            raise RequestError("settle_failed", "the caches could not be dropped: %s" % exc)

    @staticmethod
    def resize(header):
        """Sets a terminal's size (the serial console by default); its programs get SIGWINCH."""
        rows, cols = int(header["rows"]), int(header["cols"])
        fd = os.open(header.get("tty", "/dev/ttyS0"), os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        finally:
            os.close(fd)

    # ---- the warm runner's answers ----------------------------------------------------------

    def on_runner(self):
        msgs = self.warm.messages()
        if msgs is None:
            self.runner_lost(exited=False)
            return
        for msg in msgs:
            op, ex = msg.get("op"), self.execs.get(msg.get("id"))
            if op == "started" and ex:
                ex.pid = msg["pid"]
                self.port.send({"type": "started", "id": ex.id, "pid": ex.pid, "runner": "warm"})
                if ex.pending_signal:
                    ex.kill(ex.pending_signal)
            elif op == "exit" and ex:
                ex.exit_status(os.waitstatus_to_exitcode(msg["status"]))
            elif op == "preloaded" and msg.get("id") in self.preloads:
                self.preloads.discard(msg["id"])
                self.port.send({"type": "result", "id": msg["id"], "loaded": msg["loaded"],
                                "failed": msg["failed"], "ms": msg["ms"]})

    def runner_lost(self, exited):
        self.sel.unregister(self.warm.sock)
        self.warm.stop(exited)
        for ex in list(self.execs.values()):
            if ex.runner == "warm" and ex.status is None:
                ex.kill(signal.SIGKILL)  # orphaned: its exit status can no longer be collected
                self.finish(ex, error=("runner_died", "the Python runner exited"))
        for req_id in self.preloads:
            self.port.send({"type": "error", "id": req_id, "code": "runner_died",
                            "message": "the Python runner exited"})
        self.preloads.clear()

    def start_runner(self):
        env = dict(BASE_ENV)
        if os.environ.get("STACKDOCS_PY_PRELOAD"):
            env["STACKDOCS_PY_PRELOAD"] = os.environ["STACKDOCS_PY_PRELOAD"]
        self.sel.register(self.warm.start(env), selectors.EVENT_READ, ("runner", None))

    # ---- child output, exits, timeouts ------------------------------------------------------

    def read_output(self, fd, ex):
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return
        if data:
            self.port.send({"type": ex.out_fds[fd], "id": ex.id}, data)
        else:
            self.close_output(ex, fd)

    def read_status(self, ex):
        """A warm snippet's own word on its exit code (nothing if a signal ended it)."""
        try:
            data = os.read(ex.status_fd, 16)
        except BlockingIOError:
            return
        if data.strip().isdigit():
            ex.exit_status(int(data))
        self.close_status(ex)

    def close_status(self, ex):
        if ex.status_fd is not None:
            self.sel.unregister(ex.status_fd)
            os.close(ex.status_fd)
            ex.status_fd = None

    def close_output(self, ex, fd):
        if self.sel.get_map().get(fd) is not None:
            self.sel.unregister(fd)
        os.close(fd)
        del ex.out_fds[fd]

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            ex = self.children.pop(pid, None)
            if ex is not None:
                ex.exit_status(os.waitstatus_to_exitcode(status))
            elif self.spare is not None and pid == self.spare.pid:
                log("the spare shell exited unused:", os.waitstatus_to_exitcode(status))
                self.spare_lost()
            elif pid == self.warm.pid and self.warm.sock is not None:
                self.runner_lost(exited=True)

    def finish(self, ex, error=None):
        """Ends an exec: closes what is left of its pipes and sends `exit` (or `error`)."""
        for fd in list(ex.out_fds):
            self.close_output(ex, fd)
        self.close_status(ex)
        if ex.stdin_fd is not None:
            if self.sel.get_map().get(ex.stdin_fd) is not None:
                self.sel.unregister(ex.stdin_fd)
            os.close(ex.stdin_fd)
            ex.stdin_fd = None
        del self.execs[ex.id]
        if error:
            self.port.send({"type": "error", "id": ex.id, "code": error[0], "message": error[1]})
        else:
            self.port.send(ex.exit_frame())

    def tick(self):
        """Timeouts, completions and the runner restart; returns the time to the next deadline."""
        now = time.monotonic()
        deadlines = []
        for ex in list(self.execs.values()):
            if ex.status is None and ex.deadline is not None and not ex.timed_out:
                if now >= ex.deadline:
                    ex.timed_out = True
                    ex.kill(signal.SIGKILL)
                else:
                    deadlines.append(ex.deadline)
            if ex.status is not None:
                self.update_stdin(ex)
                drain_until = ex.exited_at + EXIT_DRAIN_SECONDS
                if not ex.out_fds or now >= drain_until:
                    self.finish(ex)
                else:
                    deadlines.append(drain_until)
        # A spare shell for the next command, started while nothing runs so it takes no time
        # from a command.
        if self.spare is None and not self.execs:
            if now >= self.spare_at:
                self.start_spare()
            else:
                deadlines.append(self.spare_at)
        if self.warm.sock is None:
            if now >= self.warm.restart_at:
                self.start_runner()
            else:
                deadlines.append(self.warm.restart_at)
        return max(0.0, min(deadlines) - now) if deadlines else None

    # ---- the loop ---------------------------------------------------------------------------

    def run(self):
        self.port.send({"type": "ready", **self.status_info()})
        log("ready")
        self.start_runner()
        while True:
            timeout = self.tick()
            self.update_interest()
            for key, events in self.sel.select(timeout):
                kind, ex = key.data
                if kind == "port":
                    if events & selectors.EVENT_READ:
                        for header, payload in self.port.read_messages():
                            self.handle(header, payload)
                    if events & selectors.EVENT_WRITE:
                        self.port.flush()
                elif kind == "wake":
                    try:
                        os.read(self.wake_fd, 4096)
                    except BlockingIOError:
                        pass
                    self.reap()
                elif kind == "runner":
                    self.on_runner()
                elif kind == "out" and key.fd in ex.out_fds:
                    self.read_output(key.fd, ex)
                elif kind == "stdin":
                    self.update_stdin(ex)
                elif kind == "status":
                    self.read_status(ex)
            self.port.flush()

    def update_interest(self):
        """Watches the port for writability while output is queued, and pauses reading the
        children's pipes while too much output waits for the host."""
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.port.out else 0)
        if events != self.sel.get_key(self.port.fd).events:
            self.sel.modify(self.port.fd, events, ("port", None))
        paused = len(self.port.out) > OUT_HIGH_WATER
        registered = self.sel.get_map()
        for ex in self.execs.values():
            for fd in ex.out_fds:
                if not paused and fd not in registered:
                    self.sel.register(fd, selectors.EVENT_READ, ("out", ex))
                elif paused and fd in registered:
                    self.sel.unregister(fd)


def main():
    port_path = "/dev/hvc1"
    args = sys.argv[1:]
    if args[:1] == ["--port"] and len(args) > 1:
        port_path = args[1]
    log("stackdocs agent", VERSION, "on", port_path, "(imports began at %.3f)" % STARTED_AT)
    Agent(port_path).run()


if __name__ == "__main__":
    main()
