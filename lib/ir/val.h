/* val.h: Python-level values.
 *
 * An SrVal is what a jaxpr param holds (ints, tuples, dtypes,
 * PartitionSpecs, meshes, nested jaxprs, opaque text) and also what the
 * statement language computes with (those, plus arrays, functions and the
 * other objects of lang/, which are SR_V_OBJ values with a class).
 *
 * Ownership, the one rule: a value is either *counted* or *immortal*.
 *  - Counted values (rc >= 1) are malloc'ed; whoever holds a pointer holds a
 *    reference, taken with sr_ref() and dropped with sr_unref().  The
 *    constructors return a new reference; containers steal the references
 *    of the items they are given.
 *  - Immortal values (rc < 0) live in an arena, normally the arena of the
 *    program whose params hold them, and go away with it.  sr_ref/sr_unref
 *    ignore them.  An immortal container holds only immortal items; use
 *    sr_val_to_prog() to copy a counted value into an arena.
 */
#ifndef SR_IR_VAL_H
#define SR_IR_VAL_H

#include <stddef.h>
#include <stdint.h>

#include "ir/dtype.h"
#include "ir/mesh.h"
#include "util/buf.h"
#include "util/mem.h"

typedef enum {
  SR_V_NONE,
  SR_V_BOOL,
  SR_V_INT,
  SR_V_FLOAT,
  SR_V_COMPLEX,
  SR_V_STR,       /* a Python str: str() bare, repr() quoted */
  SR_V_WORD,      /* opaque text that prints as itself: float32, <lambda>,
                     Precision.HIGHEST, <function f at 0x...> */
  SR_V_TUPLE,
  SR_V_LIST,
  SR_V_SET,
  SR_V_FROZENSET,
  SR_V_DICT,
  SR_V_DTYPE,
  SR_V_SPEC,      /* PartitionSpec */
  SR_V_SHARDING,  /* NamedSharding */
  SR_V_MESH,      /* Mesh or AbstractMesh */
  SR_V_AXISTYPE,  /* AxisType.Explicit / Auto / Manual */
  SR_V_JAXPR,     /* a (closed) jaxpr: a param, or a function value */
  SR_V_JAXPR_REF, /* a hoisted jaxpr's name, before the parser resolves it */
  SR_V_OBJ,       /* an object of a class of lang/ */
} SrValKind;

struct SrVal;
struct SrJaxpr;
struct SrProgram;

/* The behaviour of SR_V_OBJ values.  lang/ fills in the slots it needs; the
   ir only frees and prints. */
typedef struct SrClass {
  const char *name;
  void (*free)(void *data);
  void (*repr)(SrBuf *out, const struct SrVal *v);
  void (*str)(SrBuf *out, const struct SrVal *v); /* NULL: same as repr */
  const void *lang; /* lang/'s table of operations for this class */
} SrClass;

typedef struct SrVal {
  int32_t rc;
  uint8_t kind;
  uint32_t textlen;
  const char *text; /* for values parsed from a jaxpr: the text, printed
                       verbatim so that what was read prints back */
  union {
    int64_t i;      /* BOOL, INT */
    double f;       /* FLOAT */
    struct { double re, im; } c;
    struct { const char *s; size_t n; } str; /* STR, WORD */
    struct { struct SrVal **items; int n, cap; } seq; /* TUPLE LIST SET FROZENSET */
    struct { struct SrVal **keys, **vals; int n, cap; } dict;
    SrDtype dtype;
    SrSpec *spec;
    struct { const SrMesh *mesh; SrSpec *spec; const char *memory_kind; } sh;
    const SrMesh *mesh;
    int axistype;
    struct { struct SrJaxpr *jaxpr; struct SrProgram *prog; } jx;
    struct { const char *name; uint32_t off; } ref; /* JAXPR_REF */
    struct { const SrClass *cls; void *data; } obj;
  };
} SrVal;

static inline SrVal *sr_ref(SrVal *v) {
  if (v && v->rc > 0) v->rc++;
  return v;
}
void sr_unref(SrVal *v);
/* Frees the counted containers (tuples, lists, sets, dicts, and objects
   of classes with a traverse hook: functions) that only other such values
   hold -- a list appended to itself, two dicts that hold each other, a
   function whose attribute holds it -- once nothing else reaches them (CPython's cycle
   collection: references from outside the containers are found by
   subtracting the ones among them).  A value held by anything else (an
   environment, an object) stays.  Returns how many it freed.  Run at
   :reset and at the end of a session. */
size_t sr_val_collect_cycles(void);
/* How many counted containers are alive (for tests). */
size_t sr_val_containers_live(void);
/* Makes the objects of cls (made after this call) seen by the collector:
   traverse calls visit on each counted value an object holds, clear drops
   them all (the object stays valid). */
typedef void (*SrValVisit)(struct SrVal *v, void *arg);
void sr_val_traverse_class(const SrClass *cls, void (*traverse)(void *data, SrValVisit visit, void *arg),
                           void (*clear)(void *data));
static inline int sr_is_immortal(const SrVal *v) { return v->rc < 0; }

/* Constructors.  With a == NULL the value is counted (a new reference),
   otherwise immortal in arena a. */
SrVal *sr_none(void); /* the immortal None */
SrVal *sr_bool(int b);
SrVal *sr_int(SrArena *a, int64_t i);
SrVal *sr_float(SrArena *a, double f);
SrVal *sr_complex(SrArena *a, double re, double im);
SrVal *sr_str(SrArena *a, const char *s, size_t n);
SrVal *sr_str_cstr(SrArena *a, const char *s);
/* A counted str that takes the malloc'ed p (n bytes, then a 0). */
SrVal *sr_str_take(char *p, size_t n);
SrVal *sr_word(SrArena *a, const char *s, size_t n);
/* An empty container with room for n items; fill with sr_seq_push. */
SrVal *sr_seq(SrArena *a, SrValKind kind, int n);
void sr_seq_push(SrArena *a, SrVal *seq, SrVal *item); /* steals item */
SrVal *sr_tuple(SrArena *a, int n, SrVal **items);     /* steals items */
/* (a, b), stealing both */
static inline SrVal *sr_pair(SrVal *a, SrVal *b) { return sr_tuple(NULL, 2, (SrVal *[]){a, b}); }
SrVal *sr_dict(SrArena *a);
void sr_dict_set(SrArena *a, SrVal *d, SrVal *key, SrVal *val); /* steals both */
SrVal *sr_dict_get(const SrVal *d, const SrVal *key); /* borrowed, or NULL */
SrVal *sr_dtype_val(SrArena *a, SrDtype d);
SrVal *sr_spec_val(SrArena *a, const SrSpec *s);   /* copies s */
SrVal *sr_sharding_val(SrArena *a, const SrMesh *m, const SrSpec *s,
                       const char *memory_kind);
SrVal *sr_mesh_val(SrArena *a, const SrMesh *m);
SrVal *sr_axistype_val(int t);
SrVal *sr_jaxpr_val(SrArena *a, struct SrJaxpr *j); /* refs j's program when counted */
SrVal *sr_obj(const SrClass *cls, void *data); /* always counted */

/* Copies a spec into an arena (a may be NULL: malloc'ed, freed with
   sr_spec_free). */
SrSpec *sr_spec_copy(SrArena *a, const SrSpec *s);
void sr_spec_free(SrSpec *s);

/* A deep copy of v as an immortal value in program p's arena; v itself if
   it already is immortal (a pass that copies equations from program q into
   p makes p depend on q, see sr_program_dep).  A jaxpr of another program
   makes p depend on it; an object of lang/ is kept as the text of its
   repr. */
SrVal *sr_val_to_prog(struct SrProgram *p, SrVal *v);
/* Objects of a class registered here are kept by reference in params
   (the program holds them, sr_program_hold) instead of as the text of
   their repr: custom_vjp's rules, which autodiff calls later. */
void sr_val_keep_class(const SrClass *cls);
/* Objects of a class registered here compare equal (sr_val_equal) when
   `equal` says so -- two ranges of the same ints -- instead of only when
   they are the same object. */
void sr_val_equal_class(const SrClass *cls, int (*equal)(const SrVal *a, const SrVal *b));

/* str(v) and repr(v) are text/'s (text/print_val.h: sr_val_str,
   sr_val_repr).  An object prints through its class's slots: str (or
   repr when it has none, or when repr is set), else <NAME object>. */
void sr_obj_print(SrBuf *out, const SrVal *v, int repr);

/* Objects of a class registered here have the Python type name
   type_name(v) (sr_val_kind_name) instead of their class's name: the
   instances of the language's classes, named for their class. */
void sr_val_type_name_class(const SrClass *cls, const char *(*type_name)(const SrVal *v));

/* Structural equality of plain data (ints, strings, tuples, specs...). */
int sr_val_equal(const SrVal *a, const SrVal *b);

/* Printing and comparing go at most SR_VAL_MAX_NEST containers deep (the
   C stack is finite); deeper, they stop short and note it.  Returns
   whether that happened since the last call, and forgets it: a caller
   that can raise turns it into RecursionError. */
enum { SR_VAL_MAX_NEST = 1000 };
int sr_val_too_deep(void);
/* The count of levels that printing and comparing share: enters container
   v (NULL: a level of comparing, not a container being printed).  Returns
   1 (then leave once), 0 when v is being printed already (it holds
   itself), -1 when SR_VAL_MAX_NEST levels are entered (too deep). */
int sr_val_nest_enter(const SrVal *v);
void sr_val_nest_leave(void);
/* Python truthiness. */
int sr_val_truthy(const SrVal *v);
const char *sr_val_kind_name(const SrVal *v); /* Python type name: "int" */

static inline int sr_is_seq(const SrVal *v) {
  return v->kind == SR_V_TUPLE || v->kind == SR_V_LIST || v->kind == SR_V_SET ||
         v->kind == SR_V_FROZENSET;
}

#endif
