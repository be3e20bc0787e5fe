"""repl_pty.py: drives shardrepl's interactive REPL on a pseudo-terminal.

    python3 repl_pty.py PATH/TO/shardrepl

Checks the prompts (">>> " and "... "), input that continues while a
bracket or a jaxpr is open and until the blank line after a block, Ctrl-C
dropping the input being typed, Ctrl-D leaving, tab completion of commands
and built-ins, the history file ($SHARDREPL_HISTORY) and that without a
terminal no prompt is printed.  Prints one line per check; exits 1 if any
failed, 77 (skip) if no pseudo-terminal can be had.
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

TIMEOUT = 10.0
failures = []

# Checks of behaviour shardrepl does not have yet: they print XFAIL and do
# not fail the test (XPASS when they start to pass: then remove them from
# here).  SR_CHECK_PENDING=1 makes them count.
KNOWN_BUGS = set()
STRICT = os.environ.get('SR_CHECK_PENDING', '0') not in ('', '0')


def check(name, ok, detail=''):
    known = name in KNOWN_BUGS and not STRICT
    if ok:
        print('%s %s' % ('XPASS' if known else 'ok  ', name))
    else:
        print('%s %s: %s' % ('XFAIL' if known else 'FAIL', name, detail))
        if not known:
            failures.append(name)


class Repl:
    """shardrepl on a pseudo-terminal, with expect-style reading."""

    def __init__(self, prog, env):
        import pty
        self.master, slave = pty.openpty()
        # the terminal must be the child's controlling terminal, so that
        # Ctrl-C raises SIGINT in it
        def setup():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        self.proc = subprocess.Popen([prog], stdin=slave, stdout=slave, stderr=slave,
                                     env=env, close_fds=True, preexec_fn=setup)
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
        except OSError:  # the other end closed
            return False
        if not data:
            return False
        self.buf += data.decode('utf-8', 'replace').replace('\r\n', '\n')
        return True

    def expect(self, pattern, timeout=TIMEOUT):
        """Waits until pattern matches what came after the last match;
        returns the text up to and including the match, or None."""
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
                m = rx.search(self.buf, self.mark)
                if m:
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
        self.proc.kill()
        return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


PROMPT = r'>>> $'
MORE = r'\.\.\. $'


def prompt(r, name):
    """Waits for the primary prompt at the end of the output so far."""
    got = r.expect(r'>>> ')
    check(name, got is not None, 'no ">>> " prompt; got %r' % r.pending())
    return got


def session_one(prog, env):
    r = Repl(prog, env)
    try:
        got = r.expect(r'shardrepl [0-9.]+.*:help.*\n')
        check('banner on a terminal', got is not None, repr(r.pending()))
        prompt(r, 'first prompt is ">>> "')

        # a bracket left open continues the input
        r.send('xs = [1,\r')
        check('an open bracket asks for more with "... "', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('2, 3]\r')
        prompt(r, 'closing the bracket ends the input')
        r.send('xs\r')
        got = r.expect(r'\[1, 2, 3\]\n')
        check('the multi-line input ran', got is not None, repr(r.pending()))
        prompt(r, 'prompt after an echo')

        # a jaxpr left open continues the input
        r.send('f = { lambda ; a:f32[8]. let\r')
        check('an open "{ lambda" asks for more', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('    b:f32[8] = sin a\r')
        check('...until its closing brace', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('  in (b,) }\r')
        prompt(r, 'the closing brace ends the jaxpr')
        r.send(':type f\r')
        got = r.expect(r'\(f32\[8\]\) -> \(f32\[8\],\)\n')
        check(':type of the pasted jaxpr', got is not None, repr(r.pending()))
        prompt(r, 'prompt after :type')

        # a block ends at a blank line
        r.send('def five():\r')
        check('"def f():" asks for more', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('    return 5\r')
        check('the body asks for more', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('\r')
        prompt(r, 'a blank line ends the block')
        r.send('five()\r')
        check('the function was defined', r.expect(r'\n5\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after the call')

        # Ctrl-C drops the input being typed
        r.send('dropped = (1,\r')
        check('continuation before Ctrl-C', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('\x03')
        got = r.expect(r'KeyboardInterrupt\n')
        check('Ctrl-C prints KeyboardInterrupt', got is not None, repr(r.pending()))
        prompt(r, 'Ctrl-C gives a fresh ">>> " prompt')
        r.send('dropped\r')
        got = r.expect(r"NameError: name 'dropped' is not defined")
        check('Ctrl-C dropped the pending input', got is not None, repr(r.pending()))
        prompt(r, 'an error keeps the session')
        r.send('half typed\x03')
        check('Ctrl-C on a line being typed', r.expect(r'KeyboardInterrupt\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after Ctrl-C on a partial line')
        r.send('xs\r')
        check('bindings survive Ctrl-C', r.expect(r'\[1, 2, 3\]\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after Ctrl-C checks')

        # Ctrl-C interrupts a running statement
        r.send('while True:\r    pass\r\r')
        time.sleep(0.5)
        r.send('\x03')
        got = r.expect(r'KeyboardInterrupt')
        check('Ctrl-C interrupts a running loop', got is not None, repr(r.pending()))
        prompt(r, 'prompt after the interrupted loop')

        # tab completion of commands and built-ins
        r.send(':he\t')
        time.sleep(0.3)
        r.send('\r')
        got = r.expect(r'Commands:\n')
        check('Tab completes ":he" to ":help"', got is not None, repr(r.pending()))
        prompt(r, 'prompt after :help')
        r.send('make_me\t')
        time.sleep(0.3)
        r.send("((2,), ('i',))\r")
        got = r.expect(r"Mesh\(axis_sizes=\(2,\), axis_names=\('i',\)")
        check('Tab completes "make_me" to "make_mesh"', got is not None, repr(r.pending()))
        prompt(r, 'prompt after make_mesh')
        r.send('fiv\t')
        time.sleep(0.3)
        r.send('()\r')
        check('Tab completes a user binding', r.expect(r'\n5\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after the completed call')

        # Ctrl-D leaves; an error earlier in the session makes the status 1
        r.send('\x04')
        rc = r.wait()
        check('Ctrl-D ends the session', rc is not None, 'still running')
        check('exit status 1 after an error in the session', rc == 1, 'status %r' % rc)
    finally:
        r.close()


def session_two(prog, env, hist):
    with open(hist) as f:
        lines = f.read().splitlines()
    check('the history file was written', 'xs = [1,' in lines and ':type f' in lines,
          'history: %r' % lines[-12:])
    check('blank lines are not kept in the history', '' not in lines, repr(lines))
    r = Repl(prog, env)
    try:
        prompt(r, 'second session starts')
        r.send('seven = 7\r')
        prompt(r, 'prompt after a binding')
        # Ctrl-P three times: back past "seven = 7" and "five ()" to the
        # make_mesh line of session one
        r.send('\x10\x10\x10')
        time.sleep(0.3)
        r.send('\r')
        got = r.expect(r'Mesh\(axis_sizes=\(2,\)')
        check('history recalls a line of the previous session', got is not None, repr(r.pending()))
        prompt(r, 'prompt after the recalled line')
        r.send(':quit\r')
        rc = r.wait()
        check(':quit ends the session with status 0', rc == 0, 'status %r' % rc)
    finally:
        r.close()


def no_terminal(prog, env):
    p = subprocess.run([prog], input=b'x = (1,\n 2)\nx\ndef f():\n    return 3\n\nf()\n',
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT)
    out = p.stdout.decode()
    check('without a terminal: no banner, no prompts', out == '(1, 2)\n3\n', repr(out))
    check('without a terminal: status 0', p.returncode == 0, str(p.returncode))


def main():
    prog = os.path.abspath(sys.argv[1])
    try:
        import pty
        m, s = pty.openpty()
        os.close(m)
        os.close(s)
    except (ImportError, OSError) as e:
        print('repl_pty.py: no pseudo-terminal (%s)' % e)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        hist = os.path.join(tmp, 'history')
        env = dict(os.environ)
        env.update(TERM='dumb', HOME=tmp, SHARDREPL_HISTORY=hist, INPUTRC=os.devnull,
                   LC_ALL='C', COLUMNS='200', LINES='50')
        session_one(prog, env)
        if os.path.exists(hist):
            session_two(prog, env, hist)
        else:
            check('the history file was written', False, 'no file %s' % hist)
        no_terminal(prog, env)
    print('repl_pty: %d failure(s)' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
