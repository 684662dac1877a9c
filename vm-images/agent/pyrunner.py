"""Warm Python runner: a python3 process that forks one child per snippet, so a snippet skips the
interpreter start (about a second in the emulator) and, after a `preload`, the imports too.

Started by agent.py with one end of a SOCK_SEQPACKET socket pair as the last argument (an fd).
Messages are JSON objects, one per packet; `run` carries five fds (stdin, stdout, stderr, a
memfd holding the source code, and a pipe the child writes its exit code to as it ends):

  agent -> runner  {"op": "run", "id", "args": [..], "cwd", "env": {..}}  + fds
                   {"op": "preload", "id", "modules": [..]}
  runner -> agent  {"op": "ready", "pid"}
                   {"op": "started", "id", "pid"}
                   {"op": "exit", "id", "pid", "status"}        (status: raw waitpid status)
                   {"op": "preloaded", "id", "loaded": [..], "failed": {name: message}, "ms"}

A child (forked ahead of time and warmed up: see Spare) runs the code like `python3 -c CODE ARGS...`: a fresh __main__ module, sys.argv ==
["-c", *args], sys.path[0] == "", its own session and process group, stdio on the given fds.
It shares the runner's hash seed; interpreter-start settings (PYTHONPATH aside, which is
applied) are the runner's, not re-read from `env`. It ends without module teardown (see
finish()): objects still referenced from other modules are not finalised.
"""

import array
import gc
import json
import os
import select
import signal
import socket
import sys
import time

MAX_PACKET = 1024 * 1024


def send(sock, msg):
    sock.send(json.dumps(msg, separators=(",", ":")).encode("utf-8"))


def recv(sock):
    """Returns (message, fds) or (None, []) when the agent has gone."""
    fds = array.array("i")
    data, ancdata, _flags, _addr = sock.recvmsg(MAX_PACKET, socket.CMSG_SPACE(16 * fds.itemsize))
    for level, kind, cdata in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(cdata[: len(cdata) - (len(cdata) % fds.itemsize)])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), list(fds)


def preload(modules):
    loaded, failed = [], {}
    start = time.monotonic()
    for name in modules:
        try:
            __import__(name)
            loaded.append(name)
        except BaseException as exc:  # a broken module must not take the runner down
            failed[name] = "%s: %s" % (type(exc).__name__, exc)
    return loaded, failed, round((time.monotonic() - start) * 1000)


class Spare:
    """A child forked ahead of the next snippet, waiting on its own socket for the job. It is
    forked only while no snippet runs, so it takes no time from one, and it warms up (see
    warm_up) before it waits: a snippet then skips the fork and most of the copy-on-write page
    faults of a fresh fork, which in the emulator cost ~100 ms for a `print(1)`."""

    def __init__(self, pid, sock):
        self.pid = pid
        self.sock = sock


def fork(inherited):
    """Forks; in the child, closes the runner's `inherited` fds and resets its signal set-up.
    Returns the pid (0 in the child)."""
    gc.freeze()  # the children's collections then skip everything the runner holds
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        for item in inherited:
            item.close() if hasattr(item, "close") else os.close(item)
    return pid


def serve(sock):
    """Runs the runner loop. Returns only in a forked child, with the job it must run."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children = {}  # pid -> request id
    spare = None
    send(sock, {"op": "ready", "pid": os.getpid()})
    while True:
        if spare is None and not children:
            theirs, ours = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            pid = fork([wake_r, wake_w, sock, ours])
            if pid == 0:
                os.setsid()
                warm_up()
                job = recv(theirs)
                theirs.close()
                if job[0] is None:  # dropped (a preload changed the runner), or the runner died
                    os._exit(0)
                return job
            theirs.close()
            spare = Spare(pid, ours)
        try:
            ready, _, _ = select.select([sock, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            os.read(wake_r, 4096)
            if reap(sock, children, spare):
                spare.sock.close()
                spare = None
        if sock not in ready:
            continue
        msg, fds = recv(sock)
        if msg is None:
            sys.exit(0)
        if msg.get("op") == "preload":
            loaded, failed, ms = preload(msg.get("modules") or [])
            send(sock, {"op": "preloaded", "id": msg.get("id"), "loaded": loaded,
                        "failed": failed, "ms": ms})
            if spare is not None:  # it lacks the new modules: replace it
                spare.sock.close()
                spare = None
            continue
        if msg.get("op") != "run" or len(fds) != 5:
            for fd in fds:
                os.close(fd)
            continue
        pid = None
        if spare is not None:
            try:
                socket.send_fds(spare.sock, [json.dumps(msg).encode("utf-8")], fds)
                pid = spare.pid
            except OSError:  # it died; reap() collects it
                pass
            spare.sock.close()
            spare = None
        if pid is None:
            pid = fork([wake_r, wake_w, sock])
            if pid == 0:
                os.setsid()
                return msg, fds
        for fd in fds:
            os.close(fd)
        children[pid] = msg.get("id")
        send(sock, {"op": "started", "id": msg.get("id"), "pid": pid})


WARM_UP = """
import sys
words = [str(i) * 2 for i in range(50)]
sizes = {w: len(w) for w in words}
print(len(sizes), "%s" % words[:3], sum(sizes.values()) / 2, file=sink)
"""


def child_signals():
    """A snippet's signal set-up, as in `python3 -c` (done once: in the spare, or after a fork)."""
    global CHILD_SIGNALS
    if CHILD_SIGNALS:
        return
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    CHILD_SIGNALS = True


CHILD_SIGNALS = False


def warm_up():
    """Runs a throwaway snippet the way run_child runs a real one, so that the memory a snippet
    touches (the allocator's pools, the compiler's and the builtins' objects) is already this
    child's own copy when the job comes."""
    import builtins
    import io
    import types

    child_signals()
    env = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    r, w = os.pipe()
    os.write(w, WARM_UP.encode("utf-8"))
    os.close(w)
    with os.fdopen(r, "rb") as f:
        source = f.read()
    main = types.ModuleType("__warm_up__")
    main.__builtins__ = builtins
    main.sink = io.TextIOWrapper(io.open(os.open(os.devnull, os.O_WRONLY), "wb"), encoding="utf-8")
    exec(compile(source, "<string>", "exec"), main.__dict__)
    main.sink.close()
    main.__dict__.clear()
    gc.collect()


def reap(sock, children, spare):
    """Reports the snippets that exited; returns True if the spare died."""
    spare_died = False
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return spare_died
        if pid == 0:
            return spare_died
        if pid in children:
            send(sock, {"op": "exit", "id": children.pop(pid), "pid": pid, "status": status})
        elif spare is not None and pid == spare.pid:
            spare_died = True


def run_child(msg, fds):
    """Becomes the snippet's process. Never returns: ends in SystemExit or a signal."""
    import builtins
    import io
    import types

    child_signals()
    stdin, stdout, stderr, code_fd, status_fd = fds
    os.set_inheritable(status_fd, False)  # the snippet's own children must not hold it
    for target, fd in ((0, stdin), (1, stdout), (2, stderr)):
        os.dup2(fd, target)
        os.close(fd)
    with os.fdopen(code_fd, "rb") as f:
        source = f.read()

    env = msg.get("env") or {}
    if env != os.environ:  # usually the same base environment as the last snippet's
        os.environ.clear()
        os.environ.update(env)
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.open(0, "rb", closefd=False), encoding="utf-8", errors="strict")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.open(1, "wb", buffering=0 if unbuffered else -1, closefd=False),
        encoding="utf-8", errors="strict", write_through=unbuffered)
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.open(2, "wb", buffering=0 if unbuffered else -1, closefd=False),
        encoding="utf-8", errors="backslashreplace", line_buffering=True,
        write_through=unbuffered)

    os.chdir(msg.get("cwd") or "/")
    extra = [p for p in env.get("PYTHONPATH", "").split(":") if p]
    sys.path[:] = [""] + extra + [p for p in sys.path[1:] if p not in extra]
    sys.argv = ["-c"] + list(msg.get("args") or [])
    # Seeded at fork, and the spare may have been forked before the computer was saved: every
    # wake of that state would draw the same numbers. Reseeded here, from the kernel, which the
    # host reseeds on each wake (settime's seed).
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "numpy.random" in sys.modules:  # a preloaded numpy would hand every child the same seed
        sys.modules["numpy.random"].seed()

    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    code = 0
    try:
        exec(compile(source, "<string>", "exec"), main.__dict__)
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException as exc:
        exc = exc.with_traceback(exc.__traceback__.tb_next)  # hide this frame, as `python3 -c` does
        sys.excepthook(type(exc), exc, exc.__traceback__)
        if isinstance(exc, KeyboardInterrupt):  # end by SIGINT, as python3 does
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        code = 1
    finish(main, code, status_fd)


def exit_code(exc):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def finish(main, code, status_fd):
    """Ends the child as the interpreter would, minus the module teardown.

    Full finalisation costs 200-400 ms in the emulator, so the child waits for its threads, runs
    atexit handlers, drops the snippet's globals (closing and flushing files it left open) and
    leaves with os._exit. Its exit code goes to the agent on `status_fd` just before, once its
    stdio is closed: the agent can answer without waiting for the process to be torn down and
    reaped (tens of ms here). A child killed by a signal writes nothing; the runner's `exit`
    then says how it ended.
    """
    import atexit
    import gc

    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
        main.__dict__.clear()
        gc.collect()
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = code or 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        for fd in (0, 1, 2):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.write(status_fd, b"%d" % code)
        except OSError:
            pass
        os._exit(code)


def main():
    """Entry point: `python3 -c "...; import pyrunner; pyrunner.main()" FD` (see agent.py)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p != here]  # snippets must not import the agent's modules
    sock = socket.socket(fileno=int(sys.argv[-1]))
    modules = [m for m in os.environ.pop("STACKDOCS_PY_PRELOAD", "").split(",") if m]
    preload(modules)
    job = serve(sock)
    run_child(*job)


if __name__ == "__main__":
    main()
