"""interrupt_pty.py: Ctrl-C during a long computation, on a pseudo-terminal.

    python3 interrupt_pty.py PATH/TO/shardrepl [OPTION...]

Runs the REPL with the options given (none: one process; `--ranks 2`: an
MPI job) and, for each long computation -- a jitted fori_loop of 10**9
steps, a jitted lax.scan of 10**9 steps, a Python loop of matmuls, and a
while loop that runs on the last process only -- presses Ctrl-C once it
runs and checks that: one KeyboardInterrupt is reported, in the located
format, within a few seconds; the bindings are as they were (the one the
statement would have made is not there, a loop's counter stopped at the
same value on every rank); the next statement runs normally on every rank.
At the end the history file holds the interrupted statements.  Prints one
line per check; exits 1 if any failed, 77 (skip) if no pseudo-terminal
can be had.  Timings are loose on purpose: the machine may be slow and
loaded.
"""
import fcntl
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import termios
import time

TIMEOUT = 60.0   # for anything that must come eventually
STOP_LIMIT = 5.0  # Ctrl-C to the report: "within a second", loosely
failures = []


def check(name, ok, detail=''):
    if ok:
        print('ok   %s' % name)
    else:
        print('FAIL %s: %s' % (name, detail))
        failures.append(name)


class Repl:
    """shardrepl on a pseudo-terminal, with expect-style reading."""

    def __init__(self, argv, env):
        import pty
        self.master, slave = pty.openpty()

        def setup():  # the terminal is its controlling terminal: ^C is SIGINT
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     close_fds=True, preexec_fn=setup)
        os.close(slave)
        self.buf = ''
        self.mark = 0

    def send(self, s):
        os.write(self.master, s.encode())

    def _read(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.master, 4096)
        except OSError:
            return False
        if not data:
            return False
        self.buf += data.decode('utf-8', 'replace').replace('\r\n', '\n')
        return True

    def expect(self, pattern, timeout=TIMEOUT):
        rx = re.compile(pattern)
        end = time.time() + timeout
        while True:
            m = rx.search(self.buf, self.mark)
            if m:
                text = self.buf[self.mark:m.end()]
                self.mark = m.end()
                return text
            left = end - time.time()
            if left <= 0 or not self._read(left):
                if rx.search(self.buf, self.mark):
                    continue
                return None

    def pending(self):
        return self.buf[self.mark:]

    def wait(self, timeout=TIMEOUT):
        end = time.time() + timeout
        while time.time() < end:
            self._read(0.1)
            rc = self.proc.poll()
            if rc is not None:
                while self._read(0.05):
                    pass
                return rc
        return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def run(r, line, name, expect=r'>>> '):
    """Sends a line (\\n: a further line of it) and waits for the prompt."""
    r.send(line.replace('\n', '\r') + '\r')
    got = r.expect(expect)
    check(name, got is not None, 'got %r' % r.pending())
    return got or ''


def interrupt(r, stmt, shown, name):
    """Starts stmt, lets it run, presses Ctrl-C and checks the report: one
    KeyboardInterrupt, located at a line that shows `shown`."""
    r.send(stmt.replace('\n', '\r') + '\r')
    # the statement is under way once its last line has echoed and no prompt follows
    time.sleep(2.0)
    early = r.pending()
    check('%s: still running after 2 s' % name, '>>> ' not in early.split('\n')[-1] and 'error' not in early,
          repr(early))
    t0 = time.time()
    r.send('\x03')
    got = r.expect(r'\n>>> ', TIMEOUT)
    took = time.time() - t0
    check('%s: stops on Ctrl-C' % name, got is not None, 'no prompt; got %r' % r.pending())
    if got is None:
        return
    check('%s: stops within %g s' % (name, STOP_LIMIT), took < STOP_LIMIT, 'took %.1f s' % took)
    report = re.search(r'<stdin>:\d+:\d+: error: KeyboardInterrupt: interrupted\n( +)(.*)\n( +)\^\n', got)
    check('%s: a located KeyboardInterrupt' % name, report is not None and shown in report.group(2),
          repr(got))
    check('%s: reported once' % name, got.count('KeyboardInterrupt') == 1, repr(got))
    check('%s: no other message' % name, got.count('interrupted') == 1, repr(got))


def session(prog, opts, env, hist, label):
    r = Repl([prog] + opts, env)
    try:
        got = r.expect(r'>>> ')
        check('%s: first prompt' % label, got is not None, repr(r.pending()))
        if got is None:
            return
        run(r, 'from jax.sharding import NamedSharding, PartitionSpec as P', '%s: import' % label)
        run(r, 'n = len(jax.devices()); mesh = jax.make_mesh((n,), ("X",))', '%s: a mesh' % label)
        # same(v): is v the same on every process?  Each process puts its own
        # value in its shards, and the sum of them all is made on every one.
        run(r, 'def same(v):\n    z = jax.device_put(jnp.full(n, v), NamedSharding(mesh, P("X")))\n'
               '    return bool(z.min() == z.max())\n', '%s: a helper' % label)
        run(r, 'r = "before"', '%s: a binding' % label)

        # a jitted fori_loop of 10**9 steps
        run(r, 'f = jax.jit(lambda k: jax.lax.fori_loop(0, k, lambda i, c: c + 1, 0))', '%s: jit' % label)
        interrupt(r, 'r = f(10**9)', 'r = f(10**9)', '%s: jitted fori_loop' % label)
        got = run(r, 'r', '%s: the binding after the fori_loop' % label)
        check('%s: the binding is as it was' % label, "'before'" in got, repr(got))
        got = run(r, 'f(10)', '%s: the next statement' % label)
        check('%s: the next jitted call runs' % label, 'Array(10, dtype=int32' in got, repr(got))

        # a jitted lax.scan of 10**9 steps
        run(r, 's = jax.jit(lambda c: jax.lax.scan(lambda c, _: (c + 1.0, None), c, None, length=10**9)[0])',
            '%s: scan' % label)
        interrupt(r, 'r = s(0.0)', 'r = s(0.0)', '%s: jitted lax.scan' % label)
        got = run(r, 'print(r, jax.lax.scan(lambda c, _: (c + 1.0, None), 0.0, None, length=5)[0])',
                  '%s: after the scan' % label)
        check('%s: the binding is as it was, a scan runs' % label, 'before 5.0' in got, repr(got))

        # a Python loop of matmuls, with a counter
        run(r, 'w = jnp.eye(64); x = jnp.ones((64, 64)); i = 0', '%s: matrices' % label)
        interrupt(r, 'while True:\n    x = x @ w\n    i += 1\n', '',
                  '%s: a Python loop of matmuls' % label)
        got = run(r, 'print(i > 0, same(i), same(float(x.sum())))', '%s: after the loop' % label)
        check('%s: the loop stopped at the same place on every process' % label, 'True True True' in got,
              repr(got))

        # a loop that runs on the last process only
        interrupt(r, 'while jax.process_index() == jax.process_count() - 1: pass\n', 'while jax.process_index()',
                  '%s: a loop on the last process only' % label)
        got = run(r, 'print(same(7), r)', '%s: after the one-process loop' % label)
        check('%s: every process goes on' % label, 'True before' in got, repr(got))

        r.send('\x04')
        rc = r.wait()
        check('%s: Ctrl-D ends the session' % label, rc is not None, 'still running')
    finally:
        r.close()
    try:
        with open(hist) as f:
            lines = f.read().splitlines()
    except OSError as e:
        lines = [str(e)]
    check('%s: the history holds the interrupted statements' % label,
          'r = f(10**9)' in lines and 'r = s(0.0)' in lines and 'f(10)' in lines, repr(lines[-20:]))


def main():
    prog = os.path.abspath(sys.argv[1])
    opts = sys.argv[2:]
    try:
        import pty
        m, s = pty.openpty()
        os.close(m)
        os.close(s)
    except (ImportError, OSError) as e:
        print('interrupt_pty.py: no pseudo-terminal (%s)' % e)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        hist = os.path.join(tmp, 'history')
        env = dict(os.environ)
        env.update(TERM='dumb', HOME=tmp, SHARDREPL_HISTORY=hist, INPUTRC=os.devnull,
                   LC_ALL='C', COLUMNS='200', LINES='50')
        session(prog, opts, env, hist, ' '.join(opts) or 'one process')
    print('interrupt_pty %s: %d failure(s)' % (' '.join(opts), len(failures)))
    return 1 if failures else 0


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
