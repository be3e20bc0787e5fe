/* debug_picture.h: jax.debug.visualize_array_sharding's picture, drawn as
 * JAX draws it with rich (debugging.py: visualize_sharding).
 */
#ifndef SR_JAX_DEBUG_PICTURE_H
#define SR_JAX_DEBUG_PICTURE_H

#include "exec/array.h"
#include "text/color.h"
#include "util/buf.h"

typedef struct SrPicOpts {
  int use_color;    /* JAX's use_color= (effective only with a colour system) */
  double scale;
  int min_width, max_width;
  SrColorSystem cs; /* the terminal's colours; SR_CS_NONE: rich without a terminal */
} SrPicOpts;

/* The picture of a's sharding: into text as rich prints it on a terminal
   with colour system opts->cs, and, when html is non-NULL, as rich
   renders it into a notebook (its <pre> block). */
void sr_sharding_picture(SrBuf *text, SrBuf *html, const SrArray *a, const SrPicOpts *opts);

/* Where a kernel shows a rich display (text/html with its text/plain);
   NULL outside the kernel.  The kernel sets it around a cell. */
typedef void (*SrDisplayFn)(void *ctx, const char *html, size_t nhtml, const char *text, size_t ntext);
extern SrDisplayFn sr_display_fn;
/* ... and an image (data of a MIME type such as image/svg+xml). */
typedef void (*SrImageFn)(void *ctx, const char *mime, const char *data, size_t n);
extern SrImageFn sr_image_fn;
extern void *sr_display_ctx;

#endif
