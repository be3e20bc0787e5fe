"""repl_pty.py: drives shardrepl's interactive REPL on a pseudo-terminal.

    python3 repl_pty.py PATH/TO/shardrepl

Checks the prompts (">>> " and "... "), input that continues while a
bracket or a jaxpr is open and until the blank line after a block (and an
error where a line ends, reported at once), Ctrl-C dropping the input
being typed, Ctrl-D leaving, tab completion of commands and built-ins, the
history file ($SHARDREPL_HISTORY: a multi-line input is one entry, each is
appended at once, shared by sessions, never through a symbolic link, a
warning when it cannot be kept) and that without a terminal no prompt is
printed.  Prints one line per check; exits 1 if any
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
        r.send('in (b,) }\r')
        prompt(r, 'the closing brace ends the jaxpr')
        r.send(':type f\r')
        got = r.expect(r'\(f32\[8\]\) -> \(f32\[8\],\)\n')
        check(':type of the pasted jaxpr', got is not None, repr(r.pending()))
        prompt(r, 'prompt after :type')

        # a block ends at a blank line; a continuation line starts with the
        # indentation of the line before, four more after a ':' (as
        # Python 3.13's REPL), so the body is typed without it -- but lines
        # sent at once (pasted) bring their own
        r.send('def five():\r')
        check('"def f():" asks for more', r.expect(r'\.\.\.     ') is not None, repr(r.pending()))
        r.send('return 5\r')
        check('the body asks for more', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('\r')
        prompt(r, 'a blank line ends the block')
        r.send('five()\r')
        check('the function was defined', r.expect(r'\n5\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after the call')

        # a def is one history entry: Up recalls it whole, and it runs again
        # after its blank line (as in Python 3.13's REPL)
        r.send("def hello():\r    return 'hi'\r\r")
        prompt(r, 'prompt after a second def')
        r.send('del hello\r')
        prompt(r, 'prompt after del')
        r.send('\x10\x10')
        time.sleep(0.3)
        r.send('\r')
        check('a recalled def asks for its blank line', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('\r')
        prompt(r, 'prompt after the recalled def')
        r.send('hello()\r')
        got = r.expect(r"\n'hi'\n")
        check('Up recalled the whole def', got is not None and 'error' not in got, repr(got or r.pending()))
        prompt(r, 'prompt after calling the recalled def')

        # an error where a line ends is reported at once, as in Python's
        # REPL: no continuation prompt, and the next line is its own input
        r.send('1 +\r')
        got = r.expect(r'1 \+\n<stdin>:\d+:\d+: error: [^\n]*\n')
        check('"1 +" is a syntax error at once', got is not None and '... ' not in got, repr(got or r.pending()))
        prompt(r, 'prompt after "1 +"')
        r.send('after = 2\r')
        prompt(r, 'the line after "1 +" is an input of its own')
        r.send('after\r')
        check('...and it ran', r.expect(r'\n2\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after the line after')
        r.send('def nobody():\r')
        check('"def f():" asks for its block', r.expect(r'\.\.\. ') is not None, repr(r.pending()))
        r.send('\r')
        got = r.expect(r'error: [^\n]*\n')
        check('a blank line instead of the block is an error', got is not None, repr(r.pending()))
        prompt(r, 'prompt after the missing block')

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

        # Tab where only blanks precede it indents
        r.send('zs = [\r')
        r.send('\t7]\r')
        prompt(r, 'the bracket closed on the Tab-indented line')
        r.send('zs\r')
        check('Tab at the start of a line indents', r.expect(r'\[7\]\n') is not None, repr(r.pending()))
        prompt(r, 'prompt after zs')

        # tab completion of commands and built-ins, and of attributes
        r.send('jnp.linsp\t')
        time.sleep(0.3)
        r.send('(0, 1, 3)\r')
        check('Tab completes "jnp.linsp" to "jnp.linspace"', r.expect(r'Array\(\[0\. *, 0\.5, 1\. *\]') is not None, repr(r.pending()))
        prompt(r, 'prompt after linspace')
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


def read_history(hist):
    with open(hist, newline='') as f:
        return f.read()


def session_two(prog, env, hist):
    text = read_history(hist)
    lines = text.split('\n')[:-1]
    check('the history file was written', ':type f' in lines and 'five()' in lines, 'history: %r' % lines[-12:])
    check('a multi-line input is one entry, its inner newlines as "\\r\\n"',
          'xs = [1,\r\n2, 3]\n' in text and 'def five():\r\n    return 5\n' in text and 'zs = [\r\n    7]\n' in text
          and '    b:f32[8] = sin a\r\n    in (b,) }\n' in text, repr(text))
    check('blank lines are not kept in the history', '' not in lines, repr(lines))
    check('the history file has mode 0600', os.stat(hist).st_mode & 0o777 == 0o600, oct(os.stat(hist).st_mode))
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


def session_shared(prog, env, hist):
    """Two sessions on one history file: each input is appended at once,
    so neither loses the other's lines, and a session whose terminal is
    closed (killed) has lost nothing."""
    a, b = Repl(prog, env), Repl(prog, env)
    try:
        prompt(a, 'session A starts')
        prompt(b, 'session B starts')
        a.send('a_one = 1\r')
        prompt(a, 'A ran a_one')
        b.send('b_one = 2\r')
        prompt(b, 'B ran b_one')
        a.send('a_two = 3\r')
        prompt(a, 'A ran a_two')
        b.proc.kill()
        b.wait()
        a.send(':quit\r')
        check('A quits', a.wait() == 0, 'still running')
    finally:
        a.close()
        b.close()
    lines = read_history(hist).split('\n')
    tail = [l for l in lines if l in ('a_one = 1', 'b_one = 2', 'a_two = 3')]
    check('two sessions keep each other\'s lines, in order', tail == ['a_one = 1', 'b_one = 2', 'a_two = 3'],
          repr(lines[-8:]))


def history_warning(prog, env, name, want, files_unchanged=()):
    """A session whose history cannot be kept: one line says why, and the
    session goes on."""
    before = [(f, os.path.lexists(f) and os.lstat(f)) for f in files_unchanged]
    r = Repl(prog, env)
    try:
        got = r.expect(r'>>> ')
        check(name + ': one line says so', got is not None and re.search(want, got) is not None
              and got.count('history is not saved') == 1, repr(got or r.pending()))
        r.send('n = 41\r')
        prompt(r, name + ': the session goes on')
        r.send('n + 1\r')
        got = r.expect(r'42\n>>> ')
        check(name + ': and warns only once', got is not None and 'history' not in got, repr(got or r.pending()))
        r.send(':quit\r')
        check(name + ': :quit', r.wait() == 0, 'status')
    finally:
        r.close()
    for f, st in before:
        now = os.path.lexists(f) and os.lstat(f)
        same = (now == st) if not st else (now and (now.st_mtime_ns, now.st_mode, now.st_size) ==
                                           (st.st_mtime_ns, st.st_mode, st.st_size))
        check('%s: %s left alone' % (name, f), same, '%r -> %r' % (st, now))
        if not st and now:
            os.remove(f)  # made by a broken build: clean up after saying so


def history_files(prog, env, tmp):
    # a symbolic link is not followed, and its target keeps its text and mode
    target = os.path.join(tmp, 'target')
    link = os.path.join(tmp, 'link')
    with open(target, 'w') as f:
        f.write('keep\n')
    os.chmod(target, 0o644)
    os.symlink(target, link)
    e = dict(env, SHARDREPL_HISTORY=link)
    history_warning(prog, e, 'a symlinked history file', r'link: it is a symbolic link', (target, link))
    with open(target) as f:
        check('the symlink\'s target is untouched', f.read() == 'keep\n' and
              os.stat(target).st_mode & 0o777 == 0o644, oct(os.stat(target).st_mode))
    # a file that cannot be made
    e = dict(env, SHARDREPL_HISTORY=os.path.join(tmp, 'no', 'such', 'dir'))
    history_warning(prog, e, 'an unwritable history file', r'No such file or directory')
    # HOME unset, empty or not a directory, with no SHARDREPL_HISTORY
    e = dict(env)
    del e['SHARDREPL_HISTORY']
    e['HOME'] = ''
    history_warning(prog, e, 'HOME=""', r'HOME is not set', ['/.shardrepl_history'])
    del e['HOME']
    history_warning(prog, e, 'HOME unset', r'HOME is not set', ['/.shardrepl_history'])
    e['HOME'] = os.path.join(tmp, 'nowhere')
    history_warning(prog, e, 'HOME not a directory', r'HOME \(.*nowhere\) is not a directory')
    # a long file is trimmed to its last 1000 entries and keeps its mode
    long = os.path.join(tmp, 'long')
    with open(long, 'w', newline='') as f:
        for i in range(1200):
            f.write('old_%d = %d\n' % (i, i) if i % 2 else 'def old_%d():\r\n    pass\n' % i)
    os.chmod(long, 0o640)
    r = Repl(prog, dict(env, SHARDREPL_HISTORY=long))
    try:
        prompt(r, 'a session on a long history')
        r.send(':quit\r')
        r.wait()
    finally:
        r.close()
    text = read_history(long)
    entries = text.replace('\r\n', ' ').split('\n')[:-1]
    check('a long history is trimmed to its last 1000 entries',
          len(entries) == 1001 and entries[0] == 'def old_200():     pass' and entries[-1] == ':quit',
          '%d entries, %r ... %r' % (len(entries), entries[:1], entries[-2:]))
    check('...and keeps its mode', os.stat(long).st_mode & 0o777 == 0o640, oct(os.stat(long).st_mode))


def no_terminal(prog, env):
    p = subprocess.run([prog], input=b'x = (1,\n 2)\nx\ndef f():\n    return 3\n\nf()\n',
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT)
    out = p.stdout.decode()
    check('without a terminal: no banner, no prompts', out == '(1, 2)\n3\n', repr(out))
    check('without a terminal: status 0', p.returncode == 0, str(p.returncode))


def input_builtin(prog, env):
    """input() at the terminal reads through the line editor, after its
    prompt; without a terminal it reads standard input (CPython's input)."""
    r = Repl(prog, env)
    try:
        prompt(r, 'input(): first prompt')
        r.send('name = input("who? ")\r')
        check('input() shows its prompt', r.expect(r'who\? ') is not None, repr(r.pending()))
        r.send('Ada\r')
        prompt(r, 'input() returns to the prompt')
        r.send('print(repr(name))\r')
        check('input() returns the line', r.expect(r"'Ada'\n") is not None, repr(r.pending()))
        prompt(r, 'prompt after input()')
        r.send('input()\r')
        r.send('\x04')
        check('Ctrl-D at input() is EOFError', r.expect(r'EOFError: EOF when reading a line') is not None,
              repr(r.pending()))
        prompt(r, 'the session goes on after EOFError')
        r.send(':quit\r')
        r.wait()
    finally:
        r.close()
    p = subprocess.run([prog, '-e', 'print(input("> ") * 2)'], input=b'ab\n', stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT)
    check('input() without a terminal reads stdin', p.stdout.decode() == '> abab\n', repr(p.stdout))


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
        session_shared(prog, env, hist)
        history_files(prog, env, tmp)
        no_terminal(prog, env)
        input_builtin(prog, env)
    print('repl_pty: %d failure(s)' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
