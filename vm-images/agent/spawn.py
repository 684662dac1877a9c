"""Starts a program in its own session: the part of subprocess the agent needs. subprocess and
what it imports (locale, threading, contextlib...) nearly double the agent's import time, and
every import is slow at boot in the emulator (the agent's imports take 2.5-3 s there)."""

import fcntl
import os
import signal


def spawn(argv, stdio, cwd, env, pass_fds=(), extra_fds=()):
    """Starts `argv` (looked up in env's PATH) with stdin/stdout/stderr on the three `stdio` fds,
    in `cwd`, in a new session (so its pid is also its process group id).

    Returns the pid. Raises OSError when the program could not be started, exec errors
    included. Every other fd is closed in the child: Python creates fds non-inheritable, and
    only `pass_fds` (at their own numbers) and `extra_fds` (as fds 3, 4, ...) are passed on.
    The caller reaps the child.

    posix_spawn (vfork in glibc) rather than fork: forking the agent's Python process copies its
    page tables, which in the emulator costs ~150 ms per command; a vfork costs a few ms.
    """
    program = _which(argv[0], env)
    # posix_spawn has no cwd: the child inherits ours, so ours changes around the call. The agent
    # is single-threaded, so nothing else sees it.
    here = os.getcwd()
    for fd in pass_fds:
        os.set_inheritable(fd, True)
    # Out of the way of the numbers they are moved to (dup2 clears close-on-exec there).
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64) for fd in extra_fds]
    try:
        os.chdir(cwd)
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(stdio)]
        actions += [(os.POSIX_SPAWN_DUP2, fd, 3 + i) for i, fd in enumerate(high)]
        return os.posix_spawn(program, argv, env, file_actions=actions, setsid=True,
                              setsigdef=(signal.SIGPIPE,))
    finally:
        os.chdir(here)
        for fd in pass_fds:
            os.set_inheritable(fd, False)
        for fd in high:
            os.close(fd)


def _which(name, env):
    """The program's path, searched in the child's PATH (posix_spawnp would use the agent's)."""
    if "/" in name:
        return name
    for folder in (env.get("PATH") or "/usr/local/bin:/usr/bin:/bin").split(":"):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(2, "No such file or directory", name)
