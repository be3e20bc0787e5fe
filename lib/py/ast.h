/* ast.h: the statement language's syntax tree.
 *
 * One node type for everything; each kind uses the fields its comment
 * names.  Nodes live in an SrCode's arena.  Constants are counted values
 * the SrCode holds (sr_code_hold), so that evaluating one is a sr_ref.
 */
#ifndef SR_LANG_AST_H
#define SR_LANG_AST_H

#include <stdint.h>

#include "ir/val.h"
#include "py/lex.h"

typedef enum {
  /* expressions */
  SR_N_NAME,      /* name */
  SR_N_CONST,     /* val */
  SR_N_JAXPR,     /* prog */
  SR_N_TUPLE,     /* list */
  SR_N_LIST,      /* list */
  SR_N_SET,       /* list */
  SR_N_DICT,      /* list: keys (NULL for **splat), list2: values */
  SR_N_ATTR,      /* a.name */
  SR_N_SUBSCRIPT, /* a[b] */
  SR_N_SLICE,     /* a:b:c, each may be NULL */
  SR_N_CALL,      /* a(list..., names[i]=list2[i]...); names[i] NULL: **list2[i] */
  SR_N_BINOP,     /* a op b */
  SR_N_UNARY,     /* op a */
  SR_N_COMPARE,   /* a ops[0] list[0] ops[1] list[1] ... */
  SR_N_BOOLOP,    /* list joined by op (and/or) */
  SR_N_IFEXP,     /* b if a else c */
  SR_N_LAMBDA,    /* params: a */
  SR_N_COMP,      /* op = kind; a: element (key for dict), b: value (dict); list: SR_N_COMPFOR */
  SR_N_COMPFOR,   /* for a in b if list... */
  SR_N_FSTRING,   /* list: SR_N_CONST strings and SR_N_FORMAT */
  SR_N_FORMAT,    /* {a!op:b}; name: the "expr=" text of a self-documenting field */
  SR_N_STARRED,   /* *a (or **a in calls, as names[i] == NULL) */
  SR_N_YIELD,     /* yield a (a may be NULL); op 1: yield from a */
  /* statements */
  SR_N_EXPR,      /* a */
  SR_N_ASSIGN,    /* list[0] = list[1] = ... = a */
  SR_N_AUGASSIGN, /* a op= b */
  SR_N_DEF,       /* def name(params): list; list2: decorators; op 1: its body yields (a generator) */
  SR_N_RETURN,    /* return a */
  SR_N_IF,        /* if a: list else: list2 */
  SR_N_FOR,       /* for a in b: list else: list2 */
  SR_N_WHILE,     /* while a: list else: list2 */
  SR_N_TRY,       /* try: list; list2: SR_N_HANDLER; list3: finally */
  SR_N_HANDLER,   /* except a as name: list */
  SR_N_WITH,      /* with list2 (SR_N_WITHITEM): list */
  SR_N_WITHITEM,  /* a as b */
  SR_N_ASSERT,    /* assert a, b */
  SR_N_PASS,
  SR_N_BREAK,
  SR_N_CONTINUE,
  SR_N_IMPORT,    /* list: SR_N_ALIAS */
  SR_N_FROM,      /* from name import list (SR_N_ALIAS) */
  SR_N_ALIAS,     /* name as name2 */
  SR_N_RAISE,     /* raise a from b */
  SR_N_DEL,       /* del list */
  SR_N_GLOBAL,    /* global names */
  SR_N_SEQ,       /* list: several statements written on one line */
  SR_N_CLASS,     /* class name(list3...): list; list2: decorators; doc: its docstring or NULL */
  SR_N_ANNOT,     /* a: T = b (b may be NULL); doc: the text of T */
  SR_N_MATCH,     /* match a: list (SR_N_CASE) */
  SR_N_CASE,      /* case a (a pattern) if b: list */
  /* patterns (of a case) */
  SR_N_PCAPTURE,  /* a name to bind (name), or the wildcard _ (name NULL) */
  SR_N_PVALUE,    /* a: a literal or dotted name, compared with == (None, True, False: is) */
  SR_N_PSEQ,      /* [list...] or (list...), one of them maybe SR_N_PSTAR */
  SR_N_PSTAR,     /* *name (name NULL: *_) in a sequence pattern */
  SR_N_PCLASS,    /* a(list..., names[i]=list2[i]...) */
  SR_N_POR,       /* list joined by | */
  SR_N_PAS,       /* a as name */
  SR_N_PMAP,      /* {list[i] (SR_N_PVALUE): list2[i], **name} */
} SrNodeKind;

/* operators */
enum {
  SR_OP_ADD = 1, SR_OP_SUB, SR_OP_MUL, SR_OP_DIV, SR_OP_FLOORDIV, SR_OP_MOD, SR_OP_POW,
  SR_OP_MATMUL, SR_OP_LSHIFT, SR_OP_RSHIFT, SR_OP_BITAND, SR_OP_BITOR, SR_OP_BITXOR,
  /* unary */
  SR_OP_NEG, SR_OP_POS, SR_OP_INVERT, SR_OP_NOT,
  /* comparisons */
  SR_OP_EQ, SR_OP_NE, SR_OP_LT, SR_OP_LE, SR_OP_GT, SR_OP_GE, SR_OP_IN, SR_OP_NOTIN,
  SR_OP_IS, SR_OP_ISNOT,
  /* boolean */
  SR_OP_AND, SR_OP_OR,
  /* comprehension kinds */
  SR_COMP_LIST, SR_COMP_SET, SR_COMP_DICT, SR_COMP_GEN,
  /* f-string conversions */
  SR_CONV_STR, SR_CONV_REPR,
  /* unop: a 0-d array as a Python scalar (int(x), float(x), indexing) */
  SR_OP_ITEM,
  /* unop: abs(x) (a class's __abs__) */
  SR_OP_ABS,
  /* unop: x.__index__() (operator.index, hex, oct, bin): an int, or NULL
     (without an exception: the object has none) */
  SR_OP_INDEX,
};

typedef struct SrNode SrNode;

typedef struct SrParams {
  int n;               /* positional (or keyword) parameters */
  const char **names;
  SrNode **defaults;   /* NULL entries: no default */
  int nposonly;        /* parameters before a '/' */
  const char *star;    /* *args, or NULL */
  int nkwonly;         /* keyword-only parameters, after the positional ones */
  const char *kwstar;  /* **kwargs, or NULL */
} SrParams;

struct SrNode {
  uint8_t kind;
  uint8_t op;
  uint32_t off;        /* source offset, for errors */
  const char *name, *name2;
  SrVal *val;
  SrProgram *prog;
  SrNode *a, *b, *c;
  SrNode **list, **list2, **list3;
  int n, n2, n3;
  const char **names;  /* CALL: keyword names */
  uint8_t *ops;        /* COMPARE */
  SrParams *params;    /* DEF, LAMBDA */
  const char *doc;     /* DEF: the source text of the definition */
};

/* Parses one top-level statement (with its block) starting at *pos;
   advances *pos.  Returns NULL at the end of input (with no error) or on
   an error (see d; d->incomplete when more input could complete it). */
SrNode *sr_lang_parse_stmt(SrCode *code, size_t *pos, SrDiags *d, const SrMesh *mesh);
/* Parses a whole text as one expression (for :type and -e). */
SrNode *sr_lang_parse_expr(SrCode *code, size_t pos, SrDiags *d, const SrMesh *mesh);
/* Keeps a counted value alive as long as the code. */
SrVal *sr_code_hold(SrCode *code, SrVal *v);

#endif
