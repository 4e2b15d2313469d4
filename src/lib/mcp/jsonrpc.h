/* jsonrpc.h — newline-delimited JSON-RPC 2.0 frames, as MCP's stdio
 * transport carries them: a line reader with a hard cap, and a strict
 * parser that classifies one line as a request, a notification or a
 * response.
 *
 * Trust boundary: every byte comes from an agent's client or from a tool
 * server and is hostile.  A line longer than its cap is discarded up to
 * its newline without being buffered; invalid UTF-8, NUL bytes, nesting
 * deeper than CD_JSONRPC_DEPTH_MAX, duplicate keys, trailing bytes, batch
 * arrays, ids that are not a string or an integer, and anything else that
 * is not exactly one JSON-RPC 2.0 message are refused with the JSON-RPC
 * error code a peer should get.  A batch array is refused too, but marked
 * (`batch`), so that a caller that has negotiated batches (MCP 2025-03-26)
 * can split it and classify each element with cd_jsonrpc_classify.  Nothing here prints or allocates without
 * a cap. */
#ifndef CD_JSONRPC_H
#define CD_JSONRPC_H

#include "util/bounds.h"
#include "util/buf.h"
#include "util/err.h"

#include <jansson.h>
#include <stddef.h>

/* JSON-RPC error codes. */
#define CD_JSONRPC_PARSE_ERROR      (-32700)
#define CD_JSONRPC_INVALID_REQUEST  (-32600)
#define CD_JSONRPC_METHOD_NOT_FOUND (-32601)
#define CD_JSONRPC_INVALID_PARAMS   (-32602)
#define CD_JSONRPC_INTERNAL_ERROR   (-32603)

/* ---- the line reader ------------------------------------------------ */

/* Called for each complete line (without its "\n", and without one "\r"
 * before it) with status 0, or once with status -CD_E_LIMIT (line NULL)
 * when a line passes the cap: the rest of that line is then dropped up to
 * its newline.  Blank lines are skipped.  A negative return stops
 * cd_jsonrpc_feed, which returns it. */
typedef int (*cd_jsonrpc_line_fn)(void *ctx, const char *line, size_t len, int status);

struct cd_jsonrpc_reader {
	struct cd_buf line; /* a partial line (capped) */
	int discarding;     /* inside an over-long line */
	size_t cap;
};

void cd_jsonrpc_reader_init(struct cd_jsonrpc_reader *r, size_t cap);
void cd_jsonrpc_reader_release(struct cd_jsonrpc_reader *r);
/* Consume n bytes.  0, or what fn returned (negative), or -ENOMEM. */
int cd_jsonrpc_feed(struct cd_jsonrpc_reader *r, const char *p, size_t n, cd_jsonrpc_line_fn fn,
                    void *ctx);
/* 1 when a partial line is buffered (e.g. at EOF: an unterminated frame). */
int cd_jsonrpc_reader_pending(const struct cd_jsonrpc_reader *r);

/* ---- one message ---------------------------------------------------- */

enum cd_jsonrpc_kind {
	CD_JSONRPC_INVALID = 0,
	CD_JSONRPC_REQUEST,      /* method and id */
	CD_JSONRPC_NOTIFICATION, /* method, no id */
	CD_JSONRPC_RESULT,       /* id and result */
	CD_JSONRPC_ERROR,        /* id and error {code, message} */
};

/* The canonical key of an id: "i:DECIMAL" or "s:" and the string's bytes. */
#define CD_JSONRPC_IDKEY_MAX (CD_JSONRPC_ID_MAX + 3)

struct cd_jsonrpc_msg {
	enum cd_jsonrpc_kind kind;
	json_t *root;       /* owned: the whole message (NULL when it did not parse) */
	const char *method; /* borrowed from root; requests and notifications */
	json_t *id;         /* borrowed; NULL for notifications (and invalid ids) */
	json_t *params;     /* borrowed; NULL when absent */
	json_t *result;     /* borrowed; RESULT */
	json_t *error;      /* borrowed; ERROR */
	char idkey[CD_JSONRPC_IDKEY_MAX];
	/* INVALID: the JSON-RPC code the sender should get, and whether the
	 * id could still be read (then the error response names it). */
	int code;
	/* INVALID because the line is a JSON array (a JSON-RPC batch): root
	 * holds the array. */
	int batch;
};

/* Parse and classify one line.  Returns 0 with ret->kind set, or
 * -CD_E_PARSE with ret->kind CD_JSONRPC_INVALID, ret->code the JSON-RPC
 * error code, ret->id set when the message had a valid id, and a one-line
 * reason in err.  Either way the caller releases *ret. */
int cd_jsonrpc_parse(const char *line, size_t len, struct cd_jsonrpc_msg *ret, struct cd_err *err);
void cd_jsonrpc_msg_release(struct cd_jsonrpc_msg *m);

/* Classify one element of a batch as cd_jsonrpc_parse would a line (v is
 * borrowed: ret->root takes a reference).  An array is refused (a batch
 * holds messages, not batches) without setting ret->batch. */
int cd_jsonrpc_classify(json_t *v, struct cd_jsonrpc_msg *ret, struct cd_err *err);

/* The idkey of a JSON id (string or integer); -CD_E_PARSE otherwise. */
int cd_jsonrpc_idkey(const json_t *id, char out[CD_JSONRPC_IDKEY_MAX]);

/* Check the text before parsing: valid UTF-8, no NUL byte, nesting at most
 * max_depth; at most CD_JSONRPC_VALUES_MAX values and, for an array (a
 * batch), CD_MCP_BATCH_MAX elements, so that parsing memory stays bounded.
 * 0, -CD_E_PARSE or -CD_E_LIMIT (reason in err). */
int cd_jsonrpc_precheck(const char *p, size_t n, unsigned max_depth, struct cd_err *err);

/* Serialize `msg` compactly, followed by "\n", into a malloc'd string
 * (*ret_len without the NUL).  NULL on ENOMEM or a value jansson cannot
 * encode. */
char *cd_jsonrpc_dump_line(const json_t *msg, size_t *ret_len);

/* An error response line: {"jsonrpc":"2.0","id":ID|null,"error":{code,
 * message}}\n.  `message` may be any bytes: it is made valid UTF-8. */
char *cd_jsonrpc_error_line(const json_t *id, int code, const char *message, size_t *ret_len);

/* A result response line: {"jsonrpc":"2.0","id":ID,"result":RESULT}\n.
 * `result` is borrowed. */
char *cd_jsonrpc_result_line(const json_t *id, json_t *result, size_t *ret_len);

#endif
