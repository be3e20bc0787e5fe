/* kernel.c: shardrepl as a Jupyter kernel (see kernel.h).
 *
 * The messaging protocol 5.3 over ZeroMQ: shell and control are ROUTER
 * sockets answering requests, iopub a PUB socket for the status
 * (busy/idle), the inputs and the outputs of each request, stdin a ROUTER
 * (the language has no input(), so no input_request is ever sent), and
 * the heartbeat a REP socket echoed by a thread of its own.  Every
 * message is signed with HMAC-SHA256 under the connection file's key, and
 * one with a wrong signature is dropped.  What a cell prints is sent as
 * it comes (cell.h's stream, batched over 50 ms).  Requests are answered one at a
 * time; while a cell runs, an interrupt comes as SIGINT (the kernel spec's
 * interrupt_mode is "signal"), which stops it at its next interrupt point,
 * on every rank under --ranks.
 */
#include "config.h"

#include "kernel.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <zmq.h>

#include "cell.h"
#include "jax/debug_picture.h"
#include "mpi_driver.h"
#include "repl.h"
#include "util/buf.h"
#include "util/mem.h"

enum { MAX_IDS = 16 };

typedef struct Kernel {
  SrInterp *I;
  void *ctx, *shell, *control, *iopub, *stdin_sock, *hb;
  char *key;
  size_t keylen;
  char session[40];
  unsigned long seq;   /* messages sent, for their ids */
  int count;           /* execution_count */
  _Atomic int quit;
  /* the shell runs cells on the main thread, the control channel has a
     thread of its own (an interrupt_request reaches a busy kernel); each
     socket has one thread but iopub, and sending is under the lock */
  pthread_mutex_t lock;
} Kernel;

typedef struct Msg {
  int nids;
  char *ids[MAX_IDS];
  size_t idlen[MAX_IDS];
  json_t *header, *parent, *metadata, *content;
  const char *type;    /* header's msg_type */
} Msg;

static SrInterp *the_interp;

static void on_sigint(int sig) {
  (void)sig;
  if (the_interp) the_interp->interrupted = 1;
  sr_mpi_driver_sigint();
}

/* ---- signing ---- */

static void sign(const Kernel *k, const char *const *parts, const size_t *lens, int n, char hex[65]) {
  hex[0] = 0;
  if (!k->keylen) return;
  SrBuf all = SR_BUF_INIT;
  for (int i = 0; i < n; i++) sr_buf_putn(&all, parts[i], lens[i]);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  HMAC(EVP_sha256(), k->key, (int)k->keylen, (const unsigned char *)sr_buf_str(&all), all.len, md, &mdlen);
  sr_buf_free(&all);
  for (unsigned i = 0; i < mdlen && i < 32; i++) sprintf(hex + 2 * i, "%02x", md[i]);
}

/* ---- receiving ---- */

static void msg_free(Msg *m) {
  for (int i = 0; i < m->nids; i++) free(m->ids[i]);
  if (m->header) json_decref(m->header);
  if (m->parent) json_decref(m->parent);
  if (m->metadata) json_decref(m->metadata);
  if (m->content) json_decref(m->content);
  memset(m, 0, sizeof *m);
}

/* Reads one multipart message from sock; 0, or -1 (dropped: malformed or
   wrongly signed). */
static int recv_msg(Kernel *k, void *sock, Msg *m) {
  memset(m, 0, sizeof *m);
  char *frames[6 + MAX_IDS];
  size_t flen[6 + MAX_IDS];
  int nf = 0, more = 1, delim = -1;
  while (more) {
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, sock, 0) < 0) {
      zmq_msg_close(&part);
      if (errno == EINTR && nf == 0) return -1;
      if (errno == EINTR) continue;
      return -1;
    }
    more = zmq_msg_more(&part);
    size_t n = zmq_msg_size(&part);
    if (nf < 6 + MAX_IDS && (delim < 0 || nf < delim + 6)) {
      frames[nf] = sr_xmalloc(n + 1);
      memcpy(frames[nf], zmq_msg_data(&part), n);
      frames[nf][n] = 0;
      flen[nf] = n;
      if (delim < 0 && n == 9 && memcmp(frames[nf], "<IDS|MSG>", 9) == 0) delim = nf;
      nf++;
    }
    zmq_msg_close(&part);
  }
  int rc = -1;
  if (delim >= 0 && nf >= delim + 6 && delim <= MAX_IDS) {
    char hex[65];
    sign(k, (const char *const *)frames + delim + 2, flen + delim + 2, 4, hex);
    if (!k->keylen || (flen[delim + 1] == 64 && memcmp(hex, frames[delim + 1], 64) == 0)) {
      json_error_t err;
      m->header = json_loadb(frames[delim + 2], flen[delim + 2], 0, &err);
      m->parent = json_loadb(frames[delim + 3], flen[delim + 3], 0, &err);
      m->metadata = json_loadb(frames[delim + 4], flen[delim + 4], 0, &err);
      m->content = json_loadb(frames[delim + 5], flen[delim + 5], 0, &err);
      m->type = m->header ? json_string_value(json_object_get(m->header, "msg_type")) : NULL;
      if (m->header && m->content && m->type) {
        for (int i = 0; i < delim; i++) {
          m->ids[i] = frames[i];
          m->idlen[i] = flen[i];
          frames[i] = NULL;
        }
        m->nids = delim;
        rc = 0;
      }
    } else {
      fprintf(stderr, "shardrepl kernel: a message with a wrong signature was dropped\n");
    }
  }
  for (int i = 0; i < nf; i++) free(frames[i]);
  if (rc < 0) msg_free(m);
  return rc;
}

/* ---- sending ---- */

static void iso_now(char *out, size_t n) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  char s[32];
  strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, n, "%s.%06ldZ", s, (long)tv.tv_usec);
}

/* Sends a message of type `type` with content (stolen) on sock, to the
   identities ids (NULL: parent's; for iopub, the topic is the type). */
static void send_msg(Kernel *k, void *sock, const Msg *parent, const char *type, json_t *content) {
  pthread_mutex_lock(&k->lock);
  char id[80], date[64];
  snprintf(id, sizeof id, "%s_%lu", k->session, ++k->seq);
  iso_now(date, sizeof date);
  json_t *header = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "msg_id", id, "session", k->session,
                             "username", "kernel", "date", date, "msg_type", type, "version", "5.3");
  char *parts[4];
  parts[0] = json_dumps(header, JSON_COMPACT);
  json_t *empty = json_object();
  parts[1] = json_dumps(parent && parent->header ? parent->header : empty, JSON_COMPACT);
  parts[2] = json_dumps(empty, JSON_COMPACT);
  json_decref(empty);
  parts[3] = json_dumps(content, JSON_COMPACT);
  json_decref(header);
  json_decref(content);
  size_t lens[4];
  for (int i = 0; i < 4; i++) lens[i] = strlen(parts[i]);
  char hex[65];
  sign(k, (const char *const *)parts, lens, 4, hex);
  if (sock == k->iopub) {
    zmq_send(sock, type, strlen(type), ZMQ_SNDMORE);
  } else if (parent) {
    for (int i = 0; i < parent->nids; i++) zmq_send(sock, parent->ids[i], parent->idlen[i], ZMQ_SNDMORE);
  }
  zmq_send(sock, "<IDS|MSG>", 9, ZMQ_SNDMORE);
  zmq_send(sock, hex, strlen(hex), ZMQ_SNDMORE);
  for (int i = 0; i < 4; i++) {
    zmq_send(sock, parts[i], lens[i], i < 3 ? ZMQ_SNDMORE : 0);
    free(parts[i]);
  }
  pthread_mutex_unlock(&k->lock);
}

static void status(Kernel *k, const Msg *parent, const char *state) {
  send_msg(k, k->iopub, parent, "status", json_pack("{s:s}", "execution_state", state));
}

/* A text as JSON (invalid UTF-8 replaced, as Jupyter wants strings). */
static json_t *text_json(const char *s, size_t n) {
  json_t *j = json_stringn(s, n);
  if (j) return j;
  SrBuf b = SR_BUF_INIT;
  for (size_t i = 0; i < n; i++) sr_buf_putc(&b, (unsigned char)s[i] < 0x80 ? s[i] : '?');
  j = json_stringn(sr_buf_str(&b), b.len);
  sr_buf_free(&b);
  return j;
}

/* ---- the requests ---- */

static json_t *language_info(void) {
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i}, s:s}", "name", "python", "version", "3",
                   "mimetype", "text/x-python", "file_extension", ".py", "pygments_lexer", "python3",
                   "codemirror_mode", "name", "python", "version", 3, "nbconvert_exporter", "python");
}

static void kernel_info(Kernel *k, void *sock, const Msg *m) {
  char banner[200];
  snprintf(banner, sizeof banner, "shardrepl %s -- JAX's sharded jaxprs.  :help for help.", PACKAGE_VERSION);
  send_msg(k, sock, m, "kernel_info_reply",
           json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:[], s:b}", "status", "ok", "protocol_version", "5.3",
                     "implementation", "shardrepl", "implementation_version", PACKAGE_VERSION,
                     "language_info", language_info(), "banner", banner, "help_links", "debugger", 0));
}

/* The error's traceback: the located error's lines. */
static json_t *traceback(const SrCellOut *o) {
  json_t *tb = json_array();
  const char *s = sr_buf_str(&o->err);
  size_t n = o->err.len;
  while (n && s[n - 1] == '\n') n--;
  for (size_t i = 0; i < n;) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - s) : n;
    json_array_append_new(tb, text_json(s + i, e - i));
    i = e + 1;
  }
  return tb;
}

typedef struct StreamCtx {
  Kernel *k;
  const Msg *m;
  int silent;
} StreamCtx;

/* What a running cell prints, as it comes. */
static void send_stream(void *ctx, const char *text, size_t n) {
  StreamCtx *sc = ctx;
  if (!sc->silent)
    send_msg(sc->k, sc->k->iopub, sc->m, "stream", json_pack("{s:s, s:o}", "name", "stdout", "text", text_json(text, n)));
}

/* input() in a cell whose frontend allows stdin: an input_request on the
   stdin channel, to the identities of the execute_request, and its
   input_reply's value (a Ctrl-C or interrupt_request while it waits is
   KeyboardInterrupt, as in ipykernel) */
static Kernel *input_k;
static const Msg *input_m;

static int kernel_read_line(SrInterp *I, const char *prompt, SrBuf *line) {
  Kernel *k = input_k;
  sr_cell_flush();
  send_msg(k, k->stdin_sock, input_m, "input_request", json_pack("{s:s, s:b}", "prompt", prompt, "password", 0));
  for (;;) {
    zmq_pollitem_t it = {k->stdin_sock, 0, ZMQ_POLLIN, 0};
    int r = zmq_poll(&it, 1, 100);
    if (I->interrupted || k->quit) {
      sr_raise(I, "KeyboardInterrupt", "Interrupted by user");
      return -1;
    }
    if (r <= 0 || !(it.revents & ZMQ_POLLIN)) continue;
    Msg rep;
    if (recv_msg(k, k->stdin_sock, &rep) < 0) continue;
    int ok = strcmp(rep.type, "input_reply") == 0;
    const char *v = ok ? json_string_value(json_object_get(rep.content, "value")) : NULL;
    if (v) sr_buf_puts(line, v);
    msg_free(&rep);
    if (ok) return 0;
  }
}

/* A rich display (a picture) of a running cell: display_data, after what
   the cell printed before it. */
static void send_display(void *ctx, const char *html, size_t nhtml, const char *text, size_t ntext) {
  StreamCtx *sc = ctx;
  if (sc->k->I->py->out) fflush(sc->k->I->py->out);
  sr_cell_flush();
  if (!sc->silent)
    send_msg(sc->k, sc->k->iopub, sc->m, "display_data",
             json_pack("{s:{s:o, s:o}, s:{}, s:{}}", "data", "text/plain", text_json(text, ntext), "text/html",
                       text_json(html, nhtml), "metadata", "transient"));
}

/* An image (a figure of :comm --svg): display_data of its MIME type. */
static void send_image(void *ctx, const char *mime, const char *data, size_t n) {
  StreamCtx *sc = ctx;
  if (sc->k->I->py->out) fflush(sc->k->I->py->out);
  sr_cell_flush();
  if (!sc->silent)
    send_msg(sc->k, sc->k->iopub, sc->m, "display_data",
             json_pack("{s:{s:o, s:s}, s:{}, s:{}}", "data", mime, text_json(data, n), "text/plain",
                       "<IPython.core.display.SVG object>", "metadata", "transient"));
}

static void execute(Kernel *k, const Msg *m) {
  const char *code = json_string_value(json_object_get(m->content, "code"));
  if (!code) code = "";
  int silent = json_is_true(json_object_get(m->content, "silent"));
  json_t *sh = json_object_get(m->content, "store_history");
  int store = !silent && (!sh || json_is_true(sh));
  if (store) k->count++;
  int count = k->count ? k->count : 1;
  send_msg(k, k->iopub, m, "execute_input", json_pack("{s:s, s:i}", "code", code, "execution_count", count));
  /* each cell names itself, so that an error says which */
  char name[32];
  snprintf(name, sizeof name, "<cell %d>", count);
  SrSrc *src = sr_src_new(name, code, strlen(code), 1);
  SrCellOut o = SR_CELL_OUT_INIT;
  StreamCtx sc = {k, m, silent};
  int allow_stdin = json_is_true(json_object_get(m->content, "allow_stdin"));
  input_k = k;
  input_m = m;
  k->I->py->read_line = allow_stdin ? kernel_read_line : NULL;
  sr_display_fn = send_display;
  sr_image_fn = send_image;
  sr_display_ctx = &sc;
  sr_cell_run_stream(k->I, src, &o, send_stream, &sc);
  sr_display_fn = NULL;
  sr_image_fn = NULL;
  sr_display_ctx = NULL;
  k->I->py->read_line = NULL;
  sr_src_unref(src);
  if (!silent && o.warn.len)
    send_msg(k, k->iopub, m, "stream",
             json_pack("{s:s, s:o}", "name", "stderr", "text", text_json(o.warn.p, o.warn.len)));
  if (!silent && o.result.len) {
    size_t n = o.result.len;
    if (o.result.p[n - 1] == '\n') n--;
    send_msg(k, k->iopub, m, "execute_result",
             json_pack("{s:i, s:{s:o}, s:{}}", "execution_count", count, "data", "text/plain",
                       text_json(o.result.p, n), "metadata"));
  }
  if (o.failed) {
    json_t *ev = text_json(o.evalue, strlen(o.evalue));
    send_msg(k, k->iopub, m, "error",
             json_pack("{s:s, s:O, s:o}", "ename", o.ename, "evalue", ev, "traceback", traceback(&o)));
    send_msg(k, k->shell, m, "execute_reply",
             json_pack("{s:s, s:i, s:s, s:o, s:o}", "status", "error", "execution_count", count, "ename",
                       o.ename, "evalue", ev, "traceback", traceback(&o)));
  } else {
    send_msg(k, k->shell, m, "execute_reply",
             json_pack("{s:s, s:i, s:{}, s:[]}", "status", "ok", "execution_count", count,
                       "user_expressions", "payload"));
  }
  sr_cell_out_free(&o);
  if (k->I->py->quit) k->quit = 1;
}

static void is_complete(Kernel *k, const Msg *m) {
  const char *code = json_string_value(json_object_get(m->content, "code"));
  if (!code) code = "";
  size_t n = strlen(code);
  /* the input ends with a blank line: a block is over */
  size_t e = n;
  while (e && (code[e - 1] == ' ' || code[e - 1] == '\t')) e--;
  int last_blank = e >= 1 && code[e - 1] == '\n' && (e < 2 || code[e - 2] == '\n' || e < n);
  if (sr_repl_input_complete(k->I, code, n, last_blank)) {
    send_msg(k, k->shell, m, "is_complete_reply", json_pack("{s:s}", "status", "complete"));
    return;
  }
  /* the indent of the last line, one level more after a ':' */
  size_t ls = e;
  while (ls && code[ls - 1] != '\n') ls--;
  while (e > ls && code[e - 1] == '\n') e--;
  size_t ws = ls;
  while (ws < e && (code[ws] == ' ' || code[ws] == '\t')) ws++;
  char indent[64];
  size_t in = ws - ls < 56 ? ws - ls : 56;
  memcpy(indent, code + ls, in);
  if (e > ls && code[e - 1] == ':') {
    memcpy(indent + in, "    ", 4);
    in += 4;
  }
  indent[in] = 0;
  send_msg(k, k->shell, m, "is_complete_reply", json_pack("{s:s, s:s}", "status", "incomplete", "indent", indent));
}

static int is_word_char(char c) {
  return c == '_' || c == '.' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void complete(Kernel *k, const Msg *m) {
  const char *code = json_string_value(json_object_get(m->content, "code"));
  if (!code) code = "";
  size_t n = strlen(code);
  json_int_t cur = json_integer_value(json_object_get(m->content, "cursor_pos"));
  size_t pos = cur < 0 || (size_t)cur > n ? n : (size_t)cur;
  size_t ls = pos;
  while (ls && code[ls - 1] != '\n') ls--;
  char *line = sr_xmalloc(pos - ls + 1);
  memcpy(line, code + ls, pos - ls);
  line[pos - ls] = 0;
  size_t ws = pos;
  while (ws > ls && (is_word_char(code[ws - 1]) || (code[ws - 1] == ':' && ws - 1 == ls))) ws--;
  char **cands = NULL;
  int nc = sr_repl_completions(k->I, line, (int)(ws - ls), &cands);
  json_t *matches = json_array();
  for (int i = 0; i < nc; i++) {
    json_array_append_new(matches, text_json(cands[i], strlen(cands[i])));
    free(cands[i]);
  }
  free(cands);
  free(line);
  send_msg(k, k->shell, m, "complete_reply",
           json_pack("{s:s, s:o, s:I, s:I, s:{}}", "status", "ok", "matches", matches, "cursor_start",
                     (json_int_t)ws, "cursor_end", (json_int_t)pos, "metadata"));
}

/* The :help text of the name at the cursor. */
static void inspect(Kernel *k, const Msg *m) {
  const char *code = json_string_value(json_object_get(m->content, "code"));
  if (!code) code = "";
  size_t n = strlen(code);
  json_int_t cur = json_integer_value(json_object_get(m->content, "cursor_pos"));
  size_t pos = cur < 0 || (size_t)cur > n ? n : (size_t)cur;
  size_t a = pos, b = pos;
  while (a && is_word_char(code[a - 1])) a--;
  while (b < n && is_word_char(code[b])) b++;
  /* a call's name when the cursor is in its arguments: f(x|) */
  if (a == b && a && code[a - 1] == '(') {
    b = a - 1;
    a = b;
    while (a && is_word_char(code[a - 1])) a--;
  }
  json_t *data = json_object();
  int found = 0;
  if (b > a) {
    SrBuf cmd = SR_BUF_INIT;
    sr_buf_printf(&cmd, ":help %.*s", (int)(b - a), code + a);
    SrSrc *src = sr_src_new("<inspect>", cmd.p, cmd.len, 1);
    SrCellOut o = SR_CELL_OUT_INIT;
    sr_cell_run(k->I, src, &o);
    if (!o.failed && o.out.len) {
      found = 1;
      json_object_set_new(data, "text/plain", text_json(o.out.p, o.out.len));
    }
    sr_cell_out_free(&o);
    sr_src_unref(src);
    sr_buf_free(&cmd);
  }
  send_msg(k, k->shell, m, "inspect_reply",
           json_pack("{s:s, s:b, s:o, s:{}}", "status", "ok", "found", found, "data", data, "metadata"));
}

static void handle(Kernel *k, void *sock, const Msg *m) {
  const char *t = m->type;
  status(k, m, "busy");
  if (strcmp(t, "kernel_info_request") == 0) {
    kernel_info(k, sock, m);
  } else if (strcmp(t, "execute_request") == 0) {
    execute(k, m);
  } else if (strcmp(t, "is_complete_request") == 0) {
    is_complete(k, m);
  } else if (strcmp(t, "complete_request") == 0) {
    complete(k, m);
  } else if (strcmp(t, "inspect_request") == 0) {
    inspect(k, m);
  } else if (strcmp(t, "history_request") == 0) {
    send_msg(k, sock, m, "history_reply", json_pack("{s:s, s:[]}", "status", "ok", "history"));
  } else if (strcmp(t, "comm_info_request") == 0) {
    send_msg(k, sock, m, "comm_info_reply", json_pack("{s:s, s:{}}", "status", "ok", "comms"));
  } else if (strcmp(t, "interrupt_request") == 0) {
    /* the control thread's: a running cell stops as at Ctrl-C */
    on_sigint(SIGINT);
    send_msg(k, sock, m, "interrupt_reply", json_pack("{s:s}", "status", "ok"));
  } else if (strcmp(t, "shutdown_request") == 0) {
    json_t *restart = json_object_get(m->content, "restart");
    send_msg(k, sock, m, "shutdown_reply",
             json_pack("{s:s, s:b}", "status", "ok", "restart", restart && json_is_true(restart)));
    k->quit = 1;
    if (sock == k->control) on_sigint(SIGINT); /* a running cell stops */
  } else {
    fprintf(stderr, "shardrepl kernel: ignored a %s\n", t);
  }
  status(k, m, "idle");
}

/* ---- sockets ---- */

/* The control channel, while the main thread runs the shell's requests. */
static void *control_loop(void *arg) {
  Kernel *k = arg;
  while (!k->quit) {
    zmq_pollitem_t it = {k->control, 0, ZMQ_POLLIN, 0};
    int r = zmq_poll(&it, 1, 100);
    if (r <= 0 || !(it.revents & ZMQ_POLLIN)) continue;
    Msg m;
    if (recv_msg(k, k->control, &m) < 0) continue;
    handle(k, k->control, &m);
    msg_free(&m);
  }
  return NULL;
}

static void *heartbeat(void *hb) {
  zmq_proxy(hb, hb, NULL); /* echoes each ping until the context ends */
  return NULL;
}

static void *bind_socket(Kernel *k, int type, json_t *conn, const char *port_key, int *ok) {
  const char *transport = json_string_value(json_object_get(conn, "transport"));
  const char *ip = json_string_value(json_object_get(conn, "ip"));
  json_int_t port = json_integer_value(json_object_get(conn, port_key));
  if (!transport) transport = "tcp";
  if (!ip) ip = "127.0.0.1";
  char ep[300];
  if (strcmp(transport, "ipc") == 0) snprintf(ep, sizeof ep, "ipc://%s-%lld", ip, (long long)port);
  else snprintf(ep, sizeof ep, "%s://%s:%lld", transport, ip, (long long)port);
  void *s = zmq_socket(k->ctx, type);
  int linger = 1000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_bind(s, ep) < 0) {
    fprintf(stderr, "shardrepl: --kernel: cannot bind %s: %s\n", ep, zmq_strerror(errno));
    *ok = 0;
  }
  return s;
}

static void make_session(char *out, size_t n) {
  unsigned char r[16] = {0};
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(r, 1, sizeof r, f) != sizeof r) {
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    for (int i = 0; i < 16; i++) r[i] = (unsigned char)rand();
  }
  if (f) fclose(f);
  snprintf(out, n, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
           r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
}

int sr_kernel_run(SrInterp *I, const char *connection_file) {
  json_error_t err;
  json_t *conn = json_load_file(connection_file, 0, &err);
  if (!conn || !json_is_object(conn)) {
    fprintf(stderr, "shardrepl: --kernel: cannot read the connection file %s: %s\n", connection_file, err.text);
    if (conn) json_decref(conn);
    return 1;
  }
  const char *scheme = json_string_value(json_object_get(conn, "signature_scheme"));
  if (scheme && *scheme && strcmp(scheme, "hmac-sha256") != 0) {
    fprintf(stderr, "shardrepl: --kernel: signature scheme %s is not supported (hmac-sha256 is)\n", scheme);
    json_decref(conn);
    return 1;
  }
  Kernel k;
  memset(&k, 0, sizeof k);
  pthread_mutex_init(&k.lock, NULL);
  k.I = I;
  const char *key = json_string_value(json_object_get(conn, "key"));
  k.key = sr_xstrdup(key ? key : "");
  k.keylen = strlen(k.key);
  make_session(k.session, sizeof k.session);
  k.ctx = zmq_ctx_new();
  int ok = 1;
  k.shell = bind_socket(&k, ZMQ_ROUTER, conn, "shell_port", &ok);
  k.control = bind_socket(&k, ZMQ_ROUTER, conn, "control_port", &ok);
  k.stdin_sock = bind_socket(&k, ZMQ_ROUTER, conn, "stdin_port", &ok);
  k.iopub = bind_socket(&k, ZMQ_PUB, conn, "iopub_port", &ok);
  k.hb = bind_socket(&k, ZMQ_REP, conn, "hb_port", &ok);
  json_decref(conn);
  pthread_t hb_thread;
  int hb_started = ok && pthread_create(&hb_thread, NULL, heartbeat, k.hb) == 0;
  /* Ctrl-C stops a running cell; between cells it is nothing */
  the_interp = I;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  if (ok) {
    status(&k, NULL, "starting");
  }
  pthread_t control_thread;
  int control_started = ok && pthread_create(&control_thread, NULL, control_loop, &k) == 0;
  while (ok && !k.quit) {
    zmq_pollitem_t it = {k.shell, 0, ZMQ_POLLIN, 0};
    int r = zmq_poll(&it, 1, 100);
    if (r < 0 && errno != EINTR) break;
    if (r <= 0 || !(it.revents & ZMQ_POLLIN)) continue;
    Msg m;
    if (recv_msg(&k, k.shell, &m) < 0) continue;
    handle(&k, k.shell, &m);
    msg_free(&m);
  }
  k.quit = 1;
  if (control_started) pthread_join(control_thread, NULL);
  zmq_close(k.shell);
  zmq_close(k.control);
  zmq_close(k.stdin_sock);
  zmq_close(k.iopub);
  zmq_ctx_shutdown(k.ctx); /* the heartbeat's proxy returns */
  if (hb_started) pthread_join(hb_thread, NULL);
  zmq_close(k.hb);
  zmq_ctx_term(k.ctx);
  free(k.key);
  pthread_mutex_destroy(&k.lock);
  the_interp = NULL;
  return ok ? 0 : 1;
}
