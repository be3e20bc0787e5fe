"""py_oracle.py: runs golden scripts under CPython and compares what CPython
prints with the script's expected output: a SCRIPT.jxr statement by
statement as Python's prompt would (a bare expression echoes its repr), a
SCRIPT.py as Python runs a script (python3 SCRIPT.py).

    python3 py_oracle.py [--write] SCRIPT.jxr|SCRIPT.py...

Only scripts whose header says `# oracle: python` are meant for this: they
use no JAX and no colon commands, so CPython is their reference.  An
uncaught exception is written as shardrepl reports one, from CPython's own
traceback and code positions: the callers' frames (`file:line:col: in
FUNCTION`, the line, a caret at the column CPython's code positions give),
then `file:line:col: error: Type: message` (with CPython's "Did you mean"),
the line and the caret.  The script stops there, unless its header gives
-k or feeds it on stdin: then the next statement runs.
With --write it prints CPython's output instead of comparing (for a new
test).
"""
import ast
import contextlib
import difflib
import io
import os
import sys


def position(lines, frame_code, lasti, lineno):
    """The line and column (from 1) where CPython's code positions put the
    instruction at lasti, as shardrepl locates an error: a binary
    operation's at its operator (where CPython's caret is)."""
    line, col = lineno, 1
    positions = list(frame_code.co_positions())
    if 0 <= lasti // 2 < len(positions):
        ln, eln, c, ec = positions[lasti // 2]
        if ln is not None and c is not None:
            line, col = ln, c + 1
            if eln == ln and 0 < ln <= len(lines):
                seg = lines[ln - 1][c:ec]
                try:
                    e = ast.parse(seg, mode='eval').body
                except SyntaxError:
                    e = None
                if isinstance(e, ast.BinOp):
                    j = e.left.end_col_offset
                    while j < len(seg) and seg[j] in ' )':
                        j += 1
                    col = c + j + 1
    return line, col


COMPREHENSIONS = ('<listcomp>', '<setcomp>', '<dictcomp>', '<genexpr>')


def source_caret(lines, line, col):
    text = lines[line - 1] if 0 < line <= len(lines) else ''
    pad = ''.join('\t' if ch == '\t' else ' ' for ch in text[:col - 1])
    return '    %s\n    %s^\n' % (text, pad)


def report(path, lines, e):
    """An uncaught exception as shardrepl reports it."""
    frames = []
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == path:
            line, col = position(lines, code, tb.tb_lasti, tb.tb_lineno)
            if code.co_name in COMPREHENSIONS and frames:
                # a comprehension runs in its function's frame (Python 3.12)
                frames[-1] = (line, col, frames[-1][2])
            else:
                frames.append((line, col, code.co_name))
        tb = tb.tb_next
    # the last line of what CPython's excepthook prints: its own message,
    # with the "Did you mean" that only the C printer adds in Python 3.11
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        sys.__excepthook__(type(e), e, e.__traceback__)
    last = err.getvalue().rstrip('\n').split('\n')[-1]
    out = ''
    if len(frames) > 1:
        out += 'Traceback (most recent call last):\n'
        for line, col, name in frames[:-1]:
            out += '%s:%d:%d: in %s\n' % (path, line, col, name)
            out += source_caret(lines, line, col)
    line, col, _ = frames[-1] if frames else (1, 1, None)
    out += '%s:%d:%d: error: %s\n' % (path, line, col, last)
    out += source_caret(lines, line, col)
    return out


def run(path, keep_going):
    with open(path, encoding='utf-8') as f:
        src = f.read()
    lines = src.split('\n')
    script = path.endswith('.py')
    ns = {'__name__': '__main__'}
    out = io.StringIO()
    old_hook, old_argv = sys.displayhook, sys.argv

    def hook(v):
        if v is not None:
            out.write(repr(v) + '\n')

    sys.displayhook = hook
    sys.argv = [path]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            if script and not keep_going:
                units = [compile(src, path, 'exec')]
            elif script:  # -k: each statement on its own, as shardrepl goes on
                units = [compile(ast.Module(body=[node], type_ignores=[]), path, 'exec')
                         for node in ast.parse(src, path).body]
            else:
                units = [compile(ast.Interactive(body=[node]), path, 'single')
                         for node in ast.parse(src, path).body]
            for code in units:
                try:
                    exec(code, ns)
                except Exception as e:  # reported as shardrepl reports it
                    out.write(report(path, lines, e))
                    if not keep_going:
                        break
    finally:
        sys.displayhook, sys.argv = old_hook, old_argv
    return out.getvalue()


def header(path):
    """The header lines of a golden script."""
    with open(path, encoding='utf-8') as f:
        head = []
        for line in f:
            if not line.startswith('# '):
                break
            head.append(line)
    return head


def main(argv):
    write = argv[:1] == ['--write']
    if write:
        argv = argv[1:]
    failed = 0
    for path in argv:
        with open(path, encoding='utf-8') as f:
            if '# oracle: python' not in f.readline():
                continue
        head = header(path)
        keep_going = any(h.startswith('# stdin: yes') or
                         (h.startswith('# args:') and '-k' in h.split())
                         for h in head)
        here = os.getcwd()
        os.chdir(os.path.dirname(path) or '.')
        try:
            got = run(os.path.basename(path), keep_going)
        except Exception as e:  # the script is not plain Python after all
            got = 'CPython raised %s: %s\n' % (type(e).__name__, e)
        finally:
            os.chdir(here)
        if write:
            sys.stdout.write(got)
            continue
        want_path = os.path.splitext(path)[0] + '.out'
        with open(want_path, encoding='utf-8') as f:
            want = f.read()
        if got == want:
            print('PASS %s: CPython prints %s' % (path, os.path.basename(want_path)))
        else:
            failed += 1
            print('FAIL %s: CPython prints otherwise' % path)
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True),
                want_path, 'CPython'))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
