/* jaxstate.c: JAX's global state (jaxstate.h). */
#include "core/jaxstate.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* ---- the state ---- */

SrJaxState *sr_jax_state_new(void) {
  SrJaxState *s = sr_xcalloc(1, sizeof *s);
  s->num_devices = SR_DEFAULT_DEVICES;
  s->num_ranks = 1;
  return s;
}

void sr_jax_state_free(SrJaxState *s) { free(s); }

void sr_jax_state_reset(SrJaxState *s) {
  int n = s->num_devices, used = s->devices_used, ranks = s->num_ranks;
  memset(s, 0, sizeof *s);
  s->num_devices = n;
  s->devices_used = used;
  s->num_ranks = ranks;
}

const SrMesh *sr_jax_abstract_mesh(const SrJaxState *s) {
  if (s->nabstract) return s->abstract[s->nabstract - 1];
  if (s->mesh) return sr_mesh_abstract(s->mesh, 1);
  /* meshes are interned for good: the empty one is found once */
  static const SrMesh *none;
  if (!none) {
    SrMesh m = {0};
    m.abstract = 1;
    none = sr_mesh_intern(&m);
  }
  return none;
}

const SrMesh *sr_jax_context_mesh(const SrJaxState *s) {
  const SrMesh *m = sr_jax_abstract_mesh(s);
  return m->n ? m : NULL;
}
