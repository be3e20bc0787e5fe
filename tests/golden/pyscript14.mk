## pyscript14.mk: issue 14's scripts: *.py files run as Python scripts,
## --python, --jxr, --echo, --no-echo, tracebacks, NameError's "Did you
## mean", `shardrepl -` (included from golden.mk).  The .py golden scripts
## run from py_scripts.sh; the ones marked `# oracle: python` are checked
## against CPython by py_oracle.sh.
PYSCRIPT14_PY = tests/golden/py_script.py tests/golden/py_script_jax.py \
	tests/golden/py_names.py tests/golden/py_traceback.py \
	tests/golden/py_options_jxr.py tests/golden/py_options_echo.py \
	tests/golden/py_traceback_recursion.py
PYSCRIPT14_GOLDEN = tests/golden/py_traceback_kinds.jxr tests/golden/py_repl_names.jxr \
	tests/golden/py_options.jxr tests/golden/py_options_noecho.jxr \
	tests/golden/py_stdin_dash.jxr tests/golden/py_iterators.jxr
GOLDEN_TESTS += $(PYSCRIPT14_GOLDEN)
TESTS += tests/golden/py_scripts.sh
EXTRA_DIST += tests/golden/pyscript14.mk tests/golden/py_scripts.sh \
	$(PYSCRIPT14_PY) $(PYSCRIPT14_PY:.py=.out)
