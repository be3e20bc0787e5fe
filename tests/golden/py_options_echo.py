# args: --echo
# --echo keeps a Python script's names (only its imports and Python's
# built-ins) but echoes its bare expressions, as the prompt does.
# Expected: CPython's reprs (as its REPL echoes them).
import math
1 + 1
math.floor(2.5)
"text"
None
