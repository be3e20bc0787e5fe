"""py_oracle.py: runs golden scripts under CPython, statement by statement
as Python's prompt would (a bare expression echoes its repr), and compares
what CPython prints with the script's expected output.

    python3 py_oracle.py [--write] SCRIPT.jxr...

Only scripts whose header says `# oracle: python` are meant for this: they
use no JAX and no colon commands, so CPython is their reference.  With
--write it prints CPython's output instead of comparing (for a new test).
"""
import ast
import contextlib
import difflib
import io
import os
import sys


def run(path):
    with open(path, encoding='utf-8') as f:
        src = f.read()
    ns = {'__name__': '__main__'}
    out = io.StringIO()
    old_hook = sys.displayhook

    def hook(v):
        if v is not None:
            out.write(repr(v) + '\n')

    sys.displayhook = hook
    try:
        with contextlib.redirect_stdout(out):
            for node in ast.parse(src, path).body:
                code = compile(ast.Interactive(body=[node]), path, 'single')
                exec(code, ns)
    finally:
        sys.displayhook = old_hook
    return out.getvalue()


def main(argv):
    write = argv[:1] == ['--write']
    if write:
        argv = argv[1:]
    failed = 0
    for path in argv:
        with open(path, encoding='utf-8') as f:
            if '# oracle: python' not in f.readline():
                continue
        here = os.getcwd()
        os.chdir(os.path.dirname(path) or '.')
        try:
            got = run(os.path.basename(path))
        except Exception as e:  # the script is not plain Python after all
            got = 'CPython raised %s: %s\n' % (type(e).__name__, e)
        finally:
            os.chdir(here)
        if write:
            sys.stdout.write(got)
            continue
        want_path = path[:-len('.jxr')] + '.out'
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
