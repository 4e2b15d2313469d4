/* policy-yaml.h — a capped YAML document tree for the policy loader.
 *
 * Trust boundary: the bytes are untrusted.  libyaml's event parser does the
 * lexing; this layer refuses aliases, anchors, tags, duplicate keys,
 * non-scalar keys, scalars holding NUL bytes and more than one document,
 * and enforces the caps of policy.h, before any policy code looks at it. */
#ifndef CD_POLICY_YAML_H
#define CD_POLICY_YAML_H

#include "util/err.h"
#include "policy-int.h"

#include <stddef.h>

enum cd_ynode_type { CD_Y_SCALAR, CD_Y_SEQ, CD_Y_MAP };

struct cd_ynode {
	enum cd_ynode_type type;
	struct cd_mark mark;
	int plain;     /* scalar written without quotes */
	const char *s; /* scalar, NUL-terminated, no NUL inside */
	size_t len;
	/* Children: a sequence's items; a mapping's keys and values,
	 * alternating. */
	struct cd_ynode *child, *last, *next;
	size_t n;
};

/* Parse one YAML document into a tree allocated from `arena`.  Errors are
 * "NAME:LINE:COL: message" with -CD_E_PARSE or -CD_E_LIMIT (or -ENOMEM).
 * An empty stream is an error. */
int cd_yaml_parse(struct cd_arena *arena, const char *name, const char *data, size_t len,
                  struct cd_ynode **ret, struct cd_err *err);

#endif
