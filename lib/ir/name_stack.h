/* name_stack.h: JAX's name stacks (source_info_util.NameStack), the
 * transforms and scopes an equation was recorded under, from which op
 * names are made (jit(loss)/transpose(jvp())/dot_general).
 *
 * A stack is an interned string, NULL for the empty one: its elements
 * joined by '/', a Transform's element (jvp, transpose, vmap: what
 * transform_name_stack pushes) written with a leading SR_NS_TRANSFORM,
 * a Scope's (jit(f), while, body, ...) as it is.  An equation keeps the
 * stack it was bound under relative to its jaxpr's trace (SrEqn.ns), as
 * JAX's eqn.source_info.name_stack; a path through nested jaxprs is the
 * concatenation, rendered only when printed.
 */
#ifndef SR_IR_NAME_STACK_H
#define SR_IR_NAME_STACK_H

#include <stddef.h>

#include "util/buf.h"

#define SR_NS_TRANSFORM '\001'

/* NameStack.transform(name) */
const char *sr_ns_transform(const char *ns, const char *name);
/* a + b (either NULL) */
const char *sr_ns_concat(const char *a, const char *b);

/* str(NameStack): each Transform wraps the element after it, or reads
   NAME() when none follows (Transform.wrap). */
void sr_ns_render(SrBuf *out, const char *ns);
/* An op name: path's last element is the operation's own name, appended
   to str(the rest) after a '/' (mlir.source_info_to_location's
   f"{name_stack}/{primitive.name}"). */
void sr_ns_render_op(SrBuf *out, const char *path);

#endif
