"""A spare bash, started ahead of the next `command` exec, so the command skips bash's start
(exec, dynamic loading, its own start-up: ~100 ms in the emulator).

The spare is `/bin/bash -c BOOTSTRAP` in its own session, stdin on /dev/null, stdout and stderr
on fresh pipes, with two more fds: 3, a memfd the agent fills with the job, and 4, a pipe it
waits on. To run a command the agent writes into the memfd, NUL-separated, a set-up script (cd,
the exec's environment changes) and the command text, then one line on the pipe; bash reads them
(`mapfile` reads a regular file in blocks, `read -d` would read it byte by byte) and evals each.

What a command sees that `bash -c` would not: errors name `eval` rather than `-c`, and one
variable, `__stackdocs`, holds the text it was given. Anything else (stdin data, an environment
change bash treats specially) goes to a fresh `bash -c` instead: see `can_run`.
"""

import os
import re

from spawn import spawn

# One line, so that the command's line numbers (in errors, $LINENO) count from 1 as in `bash -c`.
# Before it waits, it goes once through what a job does, so the job finds that code and memory
# already paged in. $RANDOM is seeded again once the job comes: the spare may have waited
# through a save, and every wake of that state would otherwise see the same numbers.
BOOTSTRAP = ("mapfile -d '' __stackdocs < /dev/null; eval 'cd -- / && unset OLDPWD'; unset __stackdocs; "
             "read -r -u 4 || exit 0; exec 4<&-; RANDOM=$SRANDOM; mapfile -d '' -u 3 __stackdocs; exec 3<&-; "
             'unset REPLY; eval "${__stackdocs[0]}"; eval "${__stackdocs[1]}"')
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Variables bash reads only at start-up, or sets itself: a command that changes one of these
# gets a fresh bash, as `bash -c` would have started with them.
BASH_OWN = {
    "BASH_ENV", "BASHOPTS", "SHELLOPTS", "ENV", "POSIXLY_CORRECT", "PWD", "OLDPWD", "SHLVL",
    "IFS", "PS4", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "UID", "EUID", "PPID", "GROUPS",
    "RANDOM", "SRANDOM", "SECONDS", "LINENO", "EPOCHSECONDS", "EPOCHREALTIME", "OPTIND",
    "OPTERR", "HISTFILE", "HISTSIZE", "INPUTRC", "TMOUT", "EXECIGNORE", "GLOBIGNORE", "CDPATH",
    "FUNCNEST", "COMP_WORDBREAKS", "MAIL", "MAILPATH", "MAILCHECK",
}


def quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


class SpareShell:
    """One bash waiting for a command. `fds` are the agent's ends: (stdout, stderr)."""

    def __init__(self, env):
        self.env = dict(env)
        self.job_fd = os.memfd_create("stackdocs-job")
        go_r, self.go_fd = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open("/dev/null", os.O_RDONLY)
        try:
            self.pid = spawn(["/bin/bash", "-c", BOOTSTRAP], (null, out_w, err_w), "/", self.env,
                             extra_fds=(self.job_fd, go_r))
        except OSError:
            for fd in (out_r, err_r, self.go_fd, self.job_fd):
                os.close(fd)
            raise
        finally:
            for fd in (null, out_w, err_w, go_r):
                os.close(fd)
        self.fds = (out_r, err_r)

    def can_run(self, header, env):
        """Whether this spare runs the exec like `bash -c` would: same stdin, no start-up
        variable changed, a command bash can hold."""
        if header.get("stdin", "none") != "none" or "\0" in str(header["command"]):
            return False
        for key in set(env) | set(self.env):
            if env.get(key) != self.env.get(key) and (not NAME.match(key) or key in BASH_OWN or key.startswith("BASH")):
                return False
        return True

    def run(self, command, cwd, env):
        """Hands over the command. Raises OSError (e.g. BrokenPipeError) if the spare is gone."""
        setup = ["cd -- %s || exit 126" % quote(cwd), "unset OLDPWD"]
        for key in sorted(set(env) | set(self.env)):
            if key not in env:
                setup.append("unset %s" % key)
            elif env[key] != self.env.get(key):
                setup.append("export %s=%s" % (key, quote(env[key])))
        job = ("\n".join(setup) + "\0" + command).encode("utf-8", "surrogateescape")
        view = memoryview(job)
        while view:
            view = view[os.write(self.job_fd, view):]
        os.lseek(self.job_fd, 0, os.SEEK_SET)  # bash's fd 3 shares this offset
        os.write(self.go_fd, b"\n")
        self.close()

    def close(self):
        """Drops the agent's job and go fds; closing the go pipe unused makes the spare exit."""
        for fd in (self.job_fd, self.go_fd):
            if fd is not None:
                os.close(fd)
        self.job_fd = self.go_fd = None
