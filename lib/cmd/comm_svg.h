/* comm_svg.h: a picture of communication (:comm --svg FILE, --html FILE,
 * and the same on :comm-static).
 *
 * The devices are lanes; each collective is a column, a band across the
 * devices it joins (one connector per group of devices that communicate
 * together: those that differ only along its mesh axes), labelled with its
 * kind, mesh axes, bytes per device and count, and marked as the forward
 * or the backward pass (backward: its op name has a transpose(...) in
 * its name stack).  The SVG is deterministic text; the HTML page holds it.
 */
#ifndef SR_CMD_COMM_SVG_H
#define SR_CMD_COMM_SVG_H

#include <stddef.h>

#include "ir/mesh.h"
#include "py/interp.h"
#include "util/buf.h"

typedef struct SrCommBand {
  char *kind;   /* "all-reduce", or :comm-static's note ("psum") */
  char *axes;   /* "('X', 'Y')" */
  char *path;   /* the op name, "jit(loss)/transpose(jvp(loss))/dot_general" */
  char *detail; /* :comm-static: the types; NULL */
  SrAxes mask;  /* the axes on the figure's mesh */
  size_t bytes; /* per device (:comm); 0: unknown */
  long count;
} SrCommBand;

typedef struct SrCommFig {
  const char *svg, *html; /* where to write (NULL: not asked) */
  const SrMesh *mesh;     /* the lanes: its devices (NULL: ndev lanes) */
  int ndev;
  char *title;
  SrCommBand *band;
  int n, cap;
} SrCommFig;

/* Takes leading "--svg FILE" and "--html FILE" off *arg (advancing *off
   past them), into fig; -1 with a usage error when FILE is missing. */
int sr_comm_fig_opts(SrInterp *I, const char **arg, size_t *off, SrSrc *src, const char *cmd, SrCommFig *fig);
/* A band; the mask is found from axes on fig->mesh when it is 0. */
void sr_comm_fig_add(SrCommFig *fig, const char *kind, const char *axes, SrAxes mask, const char *path,
                     const char *detail, size_t bytes, long count);
/* The figure as SVG text. */
void sr_comm_svg(const SrCommFig *fig, SrBuf *out);
/* Writes the files asked for, says so, and shows the SVG inline in the
   kernel; -1 with an OSError when a file cannot be written. */
int sr_comm_fig_finish(SrInterp *I, SrCommFig *fig);
void sr_comm_fig_free(SrCommFig *fig);

/* While :comm-static walks a function, the figure its lines go into
   (NULL when no figure is asked for). */
extern SrCommFig *sr_comm_fig_static;

#endif
