/* client.c — the HTTP client over libcurl, loaded on first use; see
 * client.h for what it guarantees (one vetted address, no redirects, no
 * environment proxies, TLS verified, bodies capped).
 *
 * Trust boundary: the peer's status, headers and body are untrusted;
 * header lines are kept (capped) for cd_http_call_header() and the body is
 * handed on in the caller's callbacks, never interpreted here. */
#define CURL_DISABLE_TYPECHECK 1
#include "client.h"

#include "util/bounds.h"
#include "util/dl.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define HEAD_MAX (64 * 1024) /* the final header block we keep */

static __typeof__(curl_global_init) *p_curl_global_init;
static __typeof__(curl_easy_init) *p_curl_easy_init;
static __typeof__(curl_easy_setopt) *p_curl_easy_setopt;
static __typeof__(curl_easy_getinfo) *p_curl_easy_getinfo;
static __typeof__(curl_easy_cleanup) *p_curl_easy_cleanup;
static __typeof__(curl_easy_strerror) *p_curl_easy_strerror;
static __typeof__(curl_slist_append) *p_curl_slist_append;
static __typeof__(curl_slist_free_all) *p_curl_slist_free_all;
static __typeof__(curl_multi_init) *p_curl_multi_init;
static __typeof__(curl_multi_add_handle) *p_curl_multi_add_handle;
static __typeof__(curl_multi_remove_handle) *p_curl_multi_remove_handle;
static __typeof__(curl_multi_perform) *p_curl_multi_perform;
static __typeof__(curl_multi_poll) *p_curl_multi_poll;
static __typeof__(curl_multi_info_read) *p_curl_multi_info_read;
static __typeof__(curl_multi_cleanup) *p_curl_multi_cleanup;

static const struct cd_dl_sym curl_syms[] = {
	CD_DL_SYM(curl_global_init),         CD_DL_SYM(curl_easy_init),
	CD_DL_SYM(curl_easy_setopt),         CD_DL_SYM(curl_easy_getinfo),
	CD_DL_SYM(curl_easy_cleanup),        CD_DL_SYM(curl_easy_strerror),
	CD_DL_SYM(curl_slist_append),        CD_DL_SYM(curl_slist_free_all),
	CD_DL_SYM(curl_multi_init),          CD_DL_SYM(curl_multi_add_handle),
	CD_DL_SYM(curl_multi_remove_handle), CD_DL_SYM(curl_multi_perform),
	CD_DL_SYM(curl_multi_poll),          CD_DL_SYM(curl_multi_info_read),
	CD_DL_SYM(curl_multi_cleanup),
};

struct cd_http_call {
	struct cd_http_client *c;
	CURL *easy;
	struct curl_slist *hdrs;
	char *body;
	size_t body_len;
	struct cd_http_call_cfg cfg;
	struct cd_buf head; /* the current header block's lines */
	int status;         /* of the current block */
	int head_done;      /* on_head was called */
	size_t got;         /* body bytes so far */
	int abort_rc;       /* a callback's or a cap's refusal */
	char why[160];
	struct cd_http_call *next;
};

struct cd_http_client {
	CURLM *multi;
	struct cd_http_client_cfg cfg;
	char host[256];
	struct curl_slist *resolve;
	struct cd_http_call *reqs;
	size_t nreqs;
	int refused; /* the open-socket callback refused an address */
};

static int load_curl(struct cd_err *err)
{
	static int inited;
	int r = cd_dl_load("libcurl.so.4", "libcurl4", curl_syms,
	                   sizeof curl_syms / sizeof curl_syms[0], err);

	if (r < 0)
		return r;
	if (!inited) {
		if (p_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return cd_err_set(err, -CD_E_KERNEL, "libcurl: global init failed");
		inited = 1;
	}
	return 0;
}

static int same_addr(const struct sockaddr *a, socklen_t alen, const struct sockaddr_storage *pin)
{
	if (a->sa_family != pin->ss_family)
		return 0;
	if (a->sa_family == AF_INET && alen >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)pin;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6 && alen >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)pin;
		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr);
	}
	return 0;
}

/* Every connection libcurl opens: to the pinned address, or none. */
static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct cd_http_client *c = ctx;
	struct sockaddr_storage ss;
	int ok = purpose == CURLSOCKTYPE_IPCXN && a->socktype == SOCK_STREAM &&
	         same_addr(&a->addr, a->addrlen, c->cfg.pin);

	memset(&ss, 0, sizeof ss);
	if (a->addrlen <= sizeof ss)
		memcpy(&ss, &a->addr, a->addrlen);
	if (c->cfg.on_connect)
		c->cfg.on_connect(c->cfg.ctx, &ss, ok);
	if (!ok) {
		c->refused = 1;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

int cd_http_client_new(const struct cd_http_client_cfg *cfg, struct cd_http_client **ret,
                       struct cd_err *err)
{
	struct cd_http_client *c;
	char addr[64], line[400];
	const char *h = cfg->host;
	size_t hl = h ? strlen(h) : 0;
	int n;

	if (!cfg->pin || !h || !hl || hl >= sizeof c->host ||
	    (cfg->pin->ss_family != AF_INET && cfg->pin->ss_family != AF_INET6))
		return cd_err_set(err, -EINVAL, "http client: no host or no vetted address");
	if ((n = load_curl(err)) < 0)
		return n;
	c = calloc(1, sizeof *c);
	if (!c)
		return cd_err_set(err, -ENOMEM, "out of memory");
	c->cfg = *cfg;
	memcpy(c->host, h, hl + 1);
	c->cfg.host = c->host;
	c->multi = p_curl_multi_init();
	if (!c->multi) {
		free(c);
		return cd_err_set(err, -ENOMEM, "libcurl: no multi handle");
	}
	/* The name resolves to the vetted address only (a literal needs no
	 * entry: libcurl does not look it up). */
	if (h[0] != '[' && strspn(h, "0123456789.") != hl) {
		const void *src =
		        cfg->pin->ss_family == AF_INET
		                ? (const void *)&((const struct sockaddr_in *)cfg->pin)->sin_addr
		                : (const void *)&((const struct sockaddr_in6 *)cfg->pin)->sin6_addr;
		if (!inet_ntop(cfg->pin->ss_family, src, addr, sizeof addr) ||
		    (n = snprintf(line, sizeof line, "%s:%u:%s%s%s", h, cfg->port,
		                  cfg->pin->ss_family == AF_INET6 ? "[" : "", addr,
		                  cfg->pin->ss_family == AF_INET6 ? "]" : "")) < 0 ||
		    (size_t)n >= sizeof line || !(c->resolve = p_curl_slist_append(NULL, line))) {
			cd_http_client_free(c);
			return cd_err_set(err, -ENOMEM, "http client: cannot pin '%s'", h);
		}
	}
	*ret = c;
	return 0;
}

static void req_free(struct cd_http_call *rq)
{
	if (!rq)
		return;
	if (rq->easy) {
		p_curl_multi_remove_handle(rq->c->multi, rq->easy);
		p_curl_easy_cleanup(rq->easy);
	}
	/* Header lines may hold credentials. */
	for (struct curl_slist *l = rq->hdrs; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	p_curl_slist_free_all(rq->hdrs);
	if (rq->body)
		explicit_bzero(rq->body, rq->body_len);
	free(rq->body);
	cd_buf_release(&rq->head);
	free(rq);
}

static void unlink_req(struct cd_http_client *c, struct cd_http_call *rq)
{
	struct cd_http_call **pp;

	for (pp = &c->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == rq) {
			*pp = rq->next;
			c->nreqs--;
			return;
		}
	}
}

void cd_http_cancel(struct cd_http_client *c, struct cd_http_call *rq)
{
	if (!c || !rq)
		return;
	unlink_req(c, rq);
	req_free(rq);
}

void cd_http_client_free(struct cd_http_client *c)
{
	if (!c)
		return;
	while (c->reqs)
		cd_http_cancel(c, c->reqs);
	if (c->resolve)
		p_curl_slist_free_all(c->resolve);
	if (c->multi)
		p_curl_multi_cleanup(c->multi);
	free(c);
}

size_t cd_http_active(const struct cd_http_client *c)
{
	return c ? c->nreqs : 0;
}

const char *cd_http_call_header(const struct cd_http_call *rq, const char *name, size_t *ret_len)
{
	const char *p = rq->head.data, *end = p + rq->head.len;
	size_t nl = strlen(name);

	while (p && p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t ll = e ? (size_t)(e - p) : (size_t)(end - p);
		const char *v;

		if (ll > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
			v = p + nl + 1;
			while (v < p + ll && (*v == ' ' || *v == '\t'))
				v++;
			ll = (size_t)(p + ll - v);
			while (ll && (v[ll - 1] == ' ' || v[ll - 1] == '\t' || v[ll - 1] == '\r'))
				ll--;
			*ret_len = ll;
			return v;
		}
		p = e ? e + 1 : end;
	}
	return NULL;
}

static int head_complete(struct cd_http_call *rq)
{
	int r;

	if (rq->head_done)
		return 0;
	rq->head_done = 1;
	if (!rq->cfg.on_head)
		return 0;
	r = rq->cfg.on_head(rq->cfg.ctx, rq->status, rq);
	if (r < 0 && !rq->abort_rc) {
		rq->abort_rc = r;
		snprintf(rq->why, sizeof rq->why, "refused by the caller");
	}
	return r;
}

/* Header lines: a status line starts a block (a 1xx block is replaced by
 * the next), the empty line ends it. */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct cd_http_call *rq = ctx;
	size_t n = size * nmemb;

	if (n >= 5 && !memcmp(p, "HTTP/", 5)) {
		const char *sp = memchr(p, ' ', n);
		int st = 0;

		cd_buf_reset(&rq->head);
		for (sp = sp ? sp + 1 : NULL; sp && sp < p + n && *sp >= '0' && *sp <= '9'; sp++)
			st = st * 10 + (*sp - '0');
		rq->status = st > 999 ? 0 : st;
		return n;
	}
	if ((n == 2 && p[0] == '\r' && p[1] == '\n') || (n == 1 && p[0] == '\n')) {
		if (rq->status >= 200 && head_complete(rq) < 0)
			return 0;
		return n;
	}
	if (cd_buf_append(&rq->head, p, n) < 0) {
		rq->abort_rc = -CD_E_LIMIT;
		snprintf(rq->why, sizeof rq->why, "response headers past %d bytes", HEAD_MAX);
		return 0;
	}
	return n;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct cd_http_call *rq = ctx;
	size_t n = size * nmemb;
	int r;

	if (!rq->head_done && head_complete(rq) < 0)
		return 0;
	if (n > rq->cfg.max_body || rq->got > rq->cfg.max_body - n) {
		rq->abort_rc = -CD_E_LIMIT;
		snprintf(rq->why, sizeof rq->why, "response body past %zu bytes", rq->cfg.max_body);
		return 0;
	}
	rq->got += n;
	if (rq->cfg.on_body && (r = rq->cfg.on_body(rq->cfg.ctx, p, n)) < 0) {
		rq->abort_rc = r;
		snprintf(rq->why, sizeof rq->why, "refused by the caller");
		return 0;
	}
	return n;
}

#define SET(o, v)                                                                                  \
	do {                                                                                       \
		if (p_curl_easy_setopt(rq->easy, o, v) != CURLE_OK)                                \
			goto fail;                                                                 \
	} while (0)

static int configure(struct cd_http_client *c, struct cd_http_call *rq)
{
	const struct cd_http_call_cfg *q = &rq->cfg;

	SET(CURLOPT_URL, q->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_PROXY, "");
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->cfg.ca_file)
		SET(CURLOPT_CAINFO, c->cfg.ca_file);
	SET(CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(c->cfg.connect_timeout_ms ? c->cfg.connect_timeout_ms : 10000));
	if (q->timeout_ms)
		SET(CURLOPT_TIMEOUT_MS, (long)q->timeout_ms);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)q->max_body);
	if (c->resolve)
		SET(CURLOPT_RESOLVE, c->resolve);
	SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
	SET(CURLOPT_OPENSOCKETDATA, c);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, rq);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, rq);
	SET(CURLOPT_HTTPHEADER, rq->hdrs);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	if (!strcmp(q->method, "POST")) {
		SET(CURLOPT_POST, 1L);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
		SET(CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
	} else if (!strcmp(q->method, "DELETE")) {
		SET(CURLOPT_CUSTOMREQUEST, "DELETE");
	} else if (strcmp(q->method, "GET")) {
		goto fail;
	}
	return 0;
fail:
	return -EINVAL;
}

int cd_http_start(struct cd_http_client *c, const struct cd_http_call_cfg *q,
                  struct cd_http_call **ret, struct cd_err *err)
{
	struct cd_http_call *rq;
	size_t i;

	if (!q->url || !q->method || !q->max_body || !q->on_done)
		return cd_err_set(err, -EINVAL, "http request: incomplete");
	if (c->nreqs >= CD_HTTP_INFLIGHT_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "more than %d requests open",
		                  CD_HTTP_INFLIGHT_MAX);
	rq = calloc(1, sizeof *rq);
	if (!rq)
		return cd_err_set(err, -ENOMEM, "out of memory");
	rq->c = c;
	rq->cfg = *q;
	rq->cfg.headers = NULL;
	rq->cfg.body = NULL;
	cd_buf_init(&rq->head, HEAD_MAX);
	if (q->body_len) {
		rq->body = malloc(q->body_len);
		if (!rq->body)
			goto oom;
		memcpy(rq->body, q->body, q->body_len);
		rq->body_len = q->body_len;
	}
	/* No "Expect: 100-continue" round trip; no encodings asked for. */
	if (!(rq->hdrs = p_curl_slist_append(NULL, "Expect:")))
		goto oom;
	for (i = 0; i < q->nheaders; i++) {
		struct curl_slist *l = p_curl_slist_append(rq->hdrs, q->headers[i]);
		if (!l)
			goto oom;
		rq->hdrs = l;
	}
	rq->easy = p_curl_easy_init();
	if (!rq->easy)
		goto oom;
	if (configure(c, rq) < 0) {
		req_free(rq);
		return cd_err_set(err, -EINVAL, "http request: libcurl refused an option");
	}
	if (p_curl_multi_add_handle(c->multi, rq->easy) != CURLM_OK) {
		p_curl_easy_cleanup(rq->easy);
		rq->easy = NULL;
		goto oom;
	}
	rq->next = c->reqs;
	c->reqs = rq;
	c->nreqs++;
	if (ret)
		*ret = rq;
	return 0;
oom:
	req_free(rq);
	return cd_err_set(err, -ENOMEM, "out of memory");
}

static int curl_rc(CURLcode cc)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_FILESIZE_EXCEEDED:
		return -CD_E_LIMIT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		return -CD_E_DENIED;
	default:
		return -ECONNRESET;
	}
}

static void finish(struct cd_http_client *c, CURL *easy, CURLcode cc)
{
	struct cd_http_call *rq;
	int rc = 0;
	const char *why = "";

	for (rq = c->reqs; rq && rq->easy != easy; rq = rq->next)
		;
	if (!rq)
		return;
	unlink_req(c, rq);
	if (cc == CURLE_OK && !rq->head_done)
		(void)head_complete(rq); /* an empty body */
	if (rq->abort_rc) {
		rc = rq->abort_rc;
		why = rq->why;
	} else if (c->refused && cc != CURLE_OK) {
		rc = -CD_E_DENIED;
		why = "a connection to an address other than the vetted one was refused";
	} else if (cc != CURLE_OK) {
		rc = curl_rc(cc);
		snprintf(rq->why, sizeof rq->why, "%s", p_curl_easy_strerror(cc));
		why = rq->why;
	}
	rq->cfg.on_done(rq->cfg.ctx, rc, rq->status, why);
	req_free(rq);
}

int cd_http_client_run(struct cd_http_client *c, struct pollfd *extra, size_t nextra,
                       int timeout_ms)
{
	struct curl_waitfd w[8];
	CURLMsg *m;
	size_t i;
	int running = 0, q, nfds = 0;

	if (nextra > sizeof w / sizeof w[0])
		return -EINVAL;
	for (i = 0; i < nextra; i++) {
		w[i].fd = extra[i].fd;
		w[i].events = (short)(((extra[i].events & POLLIN) ? CURL_WAIT_POLLIN : 0) |
		                      ((extra[i].events & POLLOUT) ? CURL_WAIT_POLLOUT : 0));
		w[i].revents = 0;
	}
	if (p_curl_multi_poll(c->multi, w, (unsigned)nextra, timeout_ms < 0 ? 1000000 : timeout_ms,
	                      &nfds) != CURLM_OK)
		return -EIO;
	/* libcurl reports POLLIN and POLLOUT only: ask the kernel again for
	 * the whole story (a hang-up on a pipe comes without POLLIN). */
	for (i = 0; i < nextra; i++)
		extra[i].revents = 0;
	if (nextra && poll(extra, (nfds_t)nextra, 0) < 0 && errno != EINTR)
		return -errno;
	if (p_curl_multi_perform(c->multi, &running) != CURLM_OK)
		return -EIO;
	while ((m = p_curl_multi_info_read(c->multi, &q)))
		if (m->msg == CURLMSG_DONE)
			finish(c, m->easy_handle, m->data.result);
	return 0;
}
