/* parse.h: reading jaxprs as JAX prints them.
 *
 * The grammar is that of reference section 1.10: optional hoisted
 * `let NAME = { lambda ... } in` blocks, then a jaxpr.  Every text of the
 * current printer and of the 2021-2024 printer parses; params keep their
 * text so that they print back as written.
 *
 * Parsing never crashes or loops, and takes time and memory in proportion
 * to the text.  Errors are located diagnostics that say what was expected;
 * an error at the end of the text also sets d->incomplete, so that a REPL
 * can ask for another line.  A NUL byte in the program, jaxprs nested more
 * than 200 deep (SR_JAXPR_MAX_DEPTH, counting the levels a chain of hoisted
 * lets adds), and hoisted jaxprs that call themselves (directly or
 * through others) are errors.
 *
 * The mesh a program's types index comes from the program's own text (a
 * Mesh(...) printed in it, else the axes its types name), not from text
 * after it.  Equal param texts in a program share one immortal value.
 */
#ifndef SR_TEXT_PARSE_H
#define SR_TEXT_PARSE_H

#include <stddef.h>

#include "ir/jaxpr.h"
#include "ir/mesh.h"
#include "util/diag.h"

typedef struct SrParseOpts {
  /* The mesh in context (jax.set_mesh), or NULL.  A mesh printed in the
     text itself (a shard_map's mesh= or a jit's ctx_mesh=) takes precedence;
     with neither, the axes the text names form an unsized mesh. */
  const SrMesh *mesh;
} SrParseOpts;

/* Parses one program starting at byte `start` of src.  On success returns
   the program and sets *end to the offset just after it; on failure
   returns NULL with diagnostics in d. */
SrProgram *sr_parse_program(SrSrc *src, size_t start, size_t *end,
                            const SrParseOpts *opts, SrDiags *d);

/* True if the text at `pos` starts a jaxpr program ("{ lambda" or
   "let NAME = {"), skipping blanks. */
int sr_parse_looks_like_jaxpr(const char *s, size_t len, size_t pos);

/* Parses a param-style value ("(1, 2)", "P('X', None)", "float32") into a
   counted value; unknown forms become opaque words.  Used by the language
   to read meshes and specs out of text. */
SrVal *sr_parse_pyval(const char *s, size_t n);

/* The offset of the first non-blank byte at or after pos. */
size_t sr_skip_blanks(const char *s, size_t len, size_t pos);

#endif
