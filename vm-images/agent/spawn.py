"""Starts a program in its own session: the part of subprocess the agent needs. subprocess and
what it imports (locale, threading, contextlib...) nearly double the agent's import time, and
every import is slow at boot in the emulator (the agent's imports take 2.5-3 s there)."""

import os
import signal


def spawn(argv, stdio, cwd, env, pass_fds=()):
    """Forks and execs `argv` (looked up in env's PATH) with stdin/stdout/stderr on the three
    `stdio` fds, in `cwd`, in a new session (so its pid is also its process group id).

    Returns the pid. Raises OSError when the program could not be started, exec errors
    included. Every other fd is closed in the child: Python creates fds non-inheritable, and
    only `pass_fds` are made inheritable. The caller reaps the child.
    """
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only async-safe-enough calls until exec (the agent has no threads)
        try:
            os.close(err_r)
            os.setsid()
            for target, fd in enumerate(stdio):
                os.dup2(fd, target)
            for fd in pass_fds:
                os.set_inheritable(fd, True)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # the agent ignores it; exec would keep that
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:
            if isinstance(exc, OSError) and exc.errno:
                message = "%d:%s" % (exc.errno, exc.strerror)
            else:
                message = "0:%s" % (exc,)
            os.write(err_w, message.encode("utf-8", "replace"))
        finally:
            os._exit(127)
    os.close(err_w)
    with os.fdopen(err_r, "rb") as f:
        failure = f.read()  # empty: exec succeeded and closed the pipe
    if failure:
        os.waitpid(pid, 0)
        errno_text, _, message = failure.decode("utf-8", "replace").partition(":")
        raise OSError(int(errno_text), message, argv[0])
    return pid
