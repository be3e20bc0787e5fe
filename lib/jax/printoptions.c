/* printoptions.c: numpy's print options -- numpy.set_printoptions,
 * get_printoptions and the printoptions context manager, which JAX
 * re-exports as jax.numpy.* (an Array prints through numpy's
 * array2string, so the options are numpy's and shared by both).  They set
 * exec/numfmt.h's sr_numfmt_opts.  Registered by sr_printoptions_init
 * (jax.h).
 *
 * Supported: precision, threshold, edgeitems, linewidth, suppress,
 * nanstr, infstr, sign and floatmode, with numpy's checks and messages
 * (numpy/_core/arrayprint.py, _make_options_dict).  formatter and legacy
 * other than None/False raise NotImplementedError. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/numfmt.h"
#include "jax/jax.h"
#include "py/objects.h"
#include "util/mem.h"

static int given(const SrVal *v) { return v && v->kind != SR_V_NONE; }

static const char *const floatmodes[] = {"maxprec", "maxprec_equal", "fixed", "unique"};
static const int floatmode_ids[] = {SR_FM_MAXPREC, SR_FM_MAXPREC_EQUAL, SR_FM_FIXED, SR_FM_UNIQUE};

static const char *floatmode_name(int fm) {
  for (int i = 0; i < 4; i++)
    if (floatmode_ids[i] == fm) return floatmodes[i];
  return "maxprec";
}

static int set_str(SrInterp *I, SrVal *v, char *dst, size_t cap, const char *what) {
  if (!given(v)) return 0;
  const char *s = sr_as_str(I, v, what);
  if (!s) return -1;
  snprintf(dst, cap, "%s", s);
  return 0;
}

/* The keyword arguments of set_printoptions onto o (numpy checks all of
   them before it changes anything: so does this, on a copy). */
static int apply_options(SrInterp *I, SrVal **p, SrNumfmtOpts *out, const char *fname) {
  SrNumfmtOpts o = *out;
  int64_t n;
  if (given(p[0])) {
    if (p[0]->kind != SR_V_INT) {
      sr_raise(I, "TypeError", "precision must be an integer");
      return -1;
    }
    o.precision = (int)p[0]->i;
  }
  if (given(p[1])) {
    if (p[1]->kind == SR_V_FLOAT && isnan(p[1]->f)) {
      sr_raise(I, "ValueError", "threshold must be non-NAN, try sys.maxsize for untruncation.");
      return -1;
    }
    if (sr_as_int(I, p[1], "threshold", &n) < 0) return -1;
    o.threshold = n > 0x7fffffff ? 0x7fffffff : (int)n;
  }
  if (given(p[2])) {
    if (sr_as_int(I, p[2], "edgeitems", &n) < 0) return -1;
    o.edgeitems = (int)n;
  }
  if (given(p[3])) {
    if (sr_as_int(I, p[3], "linewidth", &n) < 0) return -1;
    o.linewidth = (int)n;
  }
  if (given(p[4])) o.suppress = sr_val_truthy(p[4]);
  if (set_str(I, p[5], o.nanstr, sizeof o.nanstr, "nanstr") < 0 ||
      set_str(I, p[6], o.infstr, sizeof o.infstr, "infstr") < 0)
    return -1;
  if (given(p[7])) {
    sr_raise(I, "NotImplementedError", "%s: formatter= is not supported", fname);
    return -1;
  }
  if (given(p[8])) {
    const char *s = p[8]->kind == SR_V_STR ? p[8]->str.s : NULL;
    if (!s || strlen(s) != 1 || !strchr(" +-", s[0])) {
      sr_raise(I, "ValueError", "sign option must be one of ' ', '+', or '-'");
      return -1;
    }
    o.sign = s[0];
  }
  if (given(p[9])) {
    const char *s = p[9]->kind == SR_V_STR ? p[9]->str.s : "";
    int fm = -1;
    for (int i = 0; i < 4; i++)
      if (strcmp(s, floatmodes[i]) == 0) fm = floatmode_ids[i];
    if (fm < 0) {
      sr_raise(I, "ValueError", "floatmode option must be one of \"fixed\", \"unique\", \"maxprec\", \"maxprec_equal\"");
      return -1;
    }
    o.floatmode = fm;
  }
  if (given(p[10]) && !(p[10]->kind == SR_V_BOOL && !p[10]->i)) {
    sr_raise(I, "NotImplementedError", "%s: legacy= is not supported", fname);
    return -1;
  }
  if (given(p[11])) {
    sr_raise(I, "NotImplementedError", "%s: override_repr= is not supported", fname);
    return -1;
  }
  *out = o;
  return 0;
}

static const char options_spec[] =
    "precision=, threshold=, edgeitems=, linewidth=, suppress=, nanstr=, infstr=, formatter=, sign=, floatmode=, *, "
    "legacy=, override_repr=";

static SrVal *np_set_printoptions(SrInterp *I, SrArgs *a) {
  SrVal *p[12];
  if (sr_args_parse(I, a, "set_printoptions", options_spec, p) < 0) return NULL;
  if (apply_options(I, p, &sr_numfmt_opts, "set_printoptions") < 0) return NULL;
  return sr_none();
}

static void put(SrVal *d, const char *k, SrVal *v) { sr_dict_set(NULL, d, sr_str_cstr(NULL, k), v); }

/* numpy 2's get_printoptions(), keys in its order */
static SrVal *options_dict(const SrNumfmtOpts *o) {
  SrVal *d = sr_dict(NULL);
  char sg[2] = {(char)o->sign, 0};
  put(d, "edgeitems", sr_int(NULL, o->edgeitems));
  put(d, "threshold", sr_int(NULL, o->threshold));
  put(d, "floatmode", sr_str_cstr(NULL, floatmode_name(o->floatmode)));
  put(d, "precision", sr_int(NULL, o->precision));
  put(d, "suppress", sr_bool(o->suppress));
  put(d, "linewidth", sr_int(NULL, o->linewidth));
  put(d, "nanstr", sr_str_cstr(NULL, o->nanstr));
  put(d, "infstr", sr_str_cstr(NULL, o->infstr));
  put(d, "sign", sr_str_cstr(NULL, sg));
  put(d, "formatter", sr_none());
  put(d, "legacy", sr_bool(0));
  put(d, "override_repr", sr_none());
  return d;
}

static SrVal *np_get_printoptions(SrInterp *I, SrArgs *a) {
  if (sr_args_parse(I, a, "get_printoptions", "", NULL) < 0) return NULL;
  return options_dict(&sr_numfmt_opts);
}

/* printoptions(...): the options checked now, put in force by `with`
   and the previous ones restored after it; entering gives the options'
   dict, as numpy's contextmanager yields get_printoptions(). */
typedef struct PrintOpts {
  SrNumfmtOpts want, saved;
} PrintOpts;

static void printopts_repr(SrBuf *out, const SrVal *v) {
  (void)v;
  sr_buf_puts(out, "<contextlib._GeneratorContextManager object>");
}

static const SrClass printopts_class = {"_GeneratorContextManager", free, printopts_repr, NULL, NULL};

static SrVal *np_printoptions(SrInterp *I, SrArgs *a) {
  SrVal *p[12];
  if (sr_args_parse(I, a, "printoptions", options_spec, p) < 0) return NULL;
  PrintOpts *po = sr_xcalloc(1, sizeof *po);
  po->want = sr_numfmt_opts;
  if (apply_options(I, p, &po->want, "printoptions") < 0) {
    free(po);
    return NULL;
  }
  return sr_obj(&printopts_class, po);
}

static SrVal *printopts_enter(SrInterp *I, SrVal *self) {
  (void)I;
  PrintOpts *po = self->obj.data;
  po->saved = sr_numfmt_opts;
  sr_numfmt_opts = po->want;
  return options_dict(&sr_numfmt_opts);
}

static void printopts_exit(SrInterp *I, SrVal *self) {
  (void)I;
  PrintOpts *po = self->obj.data;
  sr_numfmt_opts = po->saved;
}

static const SrContextOps printopts_ctx = {&printopts_class, printopts_enter, printopts_exit, 0};

void sr_printoptions_init(void) {
  sr_def("numpy.set_printoptions jax.numpy.set_printoptions", np_set_printoptions,
         "set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, suppress=None, "
         "nanstr=None, infstr=None, formatter=None, sign=None, floatmode=None): how arrays print from now on");
  sr_def("numpy.get_printoptions jax.numpy.get_printoptions", np_get_printoptions,
         "get_printoptions(): the print options in force, as a dict");
  sr_def("numpy.printoptions jax.numpy.printoptions", np_printoptions,
         "printoptions(**options): a context manager that sets print options for its block");
  sr_context_register(&printopts_ctx);
}
