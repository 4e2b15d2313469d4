/* policy-yaml.c — see policy-yaml.h; also the policy's arena.
 *
 * Trust boundary: untrusted bytes in, a tree with every cap enforced out.
 * Aliases are refused outright rather than bounded: a policy has no use
 * for them and they are how "billion laughs" documents grow. */
#include "policy-yaml.h"

#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <yaml.h>

/* ---- the arena ---- */

struct cd_arena_block {
	struct cd_arena_block *next;
	size_t used, size;
	size_t mapped; /* bytes mmap'd (a big block), 0 when malloc'd */
	max_align_t data[];
};

#define ARENA_BLOCK     (64 * 1024)
#define ARENA_BIG_AFTER (1024 * 1024)     /* bytes before blocks grow big */
#define ARENA_BIG_BLOCK (4 * 1024 * 1024) /* a big block: 2 huge pages */

/* A new block of at least `size` usable bytes.  Large policies fill tens
 * of megabytes of tree; touching fresh small pages one fault at a time was
 * half of loading 10,000 grants, so past the first megabyte blocks are
 * 4 MiB mappings the kernel may back with huge pages (THP "madvise"). */
static struct cd_arena_block *block_new(const struct cd_arena *a, size_t size)
{
	struct cd_arena_block *b;
	size_t total;

	if (a->total >= ARENA_BIG_AFTER && size <= ARENA_BIG_BLOCK - sizeof *b) {
		void *m = mmap(NULL, ARENA_BIG_BLOCK, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			(void)madvise(m, ARENA_BIG_BLOCK, MADV_HUGEPAGE);
			b = m;
			b->mapped = ARENA_BIG_BLOCK;
			b->size = ARENA_BIG_BLOCK - sizeof *b;
			b->used = 0;
			return b;
		}
	}
	if (cd_size_add(sizeof *b, size, &total) < 0 || !(b = malloc(total)))
		return NULL;
	b->mapped = 0;
	b->size = size;
	b->used = 0;
	return b;
}

void *cd_arena_alloc(struct cd_arena *a, size_t n)
{
	struct cd_arena_block *b = a->head;
	size_t need, size;
	void *p;

	if (cd_size_add(n, sizeof(max_align_t) - 1, &need) < 0)
		return NULL;
	need -= need % sizeof(max_align_t);
	if (need == 0)
		need = sizeof(max_align_t);
	if (!b || b->size - b->used < need) {
		size = need > ARENA_BLOCK ? need : ARENA_BLOCK;
		if (a->cap && (a->total > a->cap || size > a->cap - a->total))
			return NULL;
		b = block_new(a, size);
		if (!b)
			return NULL;
		b->next = a->head;
		a->head = b;
		a->total += b->size;
	}
	p = (char *)b->data + b->used;
	b->used += need;
	memset(p, 0, n);
	return p;
}

char *cd_arena_strndup(struct cd_arena *a, const char *s, size_t n)
{
	char *p;
	size_t sz;

	if (cd_size_add(n, 1, &sz) < 0)
		return NULL;
	p = cd_arena_alloc(a, sz);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void cd_arena_release(struct cd_arena *a)
{
	struct cd_arena_block *b = a->head, *next;

	while (b) {
		next = b->next;
		if (b->mapped)
			munmap(b, b->mapped);
		else
			free(b);
		b = next;
	}
	a->head = NULL;
	a->total = 0;
}

/* ---- YAML events to a tree ---- */

struct ybuild {
	struct cd_arena *arena;
	const char *name;
	struct cd_err *err;
	struct cd_ynode *stack[CD_POLICY_MAX_DEPTH + 1];
	size_t depth;
	size_t nodes;
	struct cd_ynode *root;
};

static int yfail(struct ybuild *b, int code, const yaml_mark_t *m, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int yfail(struct ybuild *b, int code, const yaml_mark_t *m, const char *fmt, ...)
{
	char msg[CD_ERR_MSG_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[0] = '\0';
	return cd_err_set(b->err, code, "%s:%zu:%zu: %s", b->name, m ? m->line + 1 : 1,
	                  m ? m->column + 1 : 1, msg);
}

static int add_node(struct ybuild *b, const yaml_event_t *ev, enum cd_ynode_type type,
                    struct cd_ynode **ret)
{
	struct cd_ynode *n, *parent;

	if (++b->nodes > CD_POLICY_MAX_NODES)
		return yfail(b, -CD_E_LIMIT, &ev->start_mark, "more than %d nodes",
		             CD_POLICY_MAX_NODES);
	n = cd_arena_alloc(b->arena, sizeof *n);
	if (!n)
		return yfail(b, -ENOMEM, &ev->start_mark, "out of memory");
	n->type = type;
	n->mark.line = (unsigned)ev->start_mark.line + 1;
	n->mark.col = (unsigned)ev->start_mark.column + 1;
	parent = b->depth ? b->stack[b->depth - 1] : NULL;
	if (!parent) {
		if (b->root)
			return yfail(b, -CD_E_PARSE, &ev->start_mark, "more than one document");
		b->root = n;
	} else {
		int is_key = parent->type == CD_Y_MAP && parent->n % 2 == 0;
		if (is_key && type != CD_Y_SCALAR)
			return yfail(b, -CD_E_PARSE, &ev->start_mark,
			             "a mapping key must be a plain string");
		if (parent->type == CD_Y_MAP && parent->n / 2 >= CD_POLICY_MAX_KEYS && is_key)
			return yfail(b, -CD_E_LIMIT, &ev->start_mark,
			             "more than %d keys in one mapping", CD_POLICY_MAX_KEYS);
		if (parent->last)
			parent->last->next = n;
		else
			parent->child = n;
		parent->last = n;
		parent->n++;
	}
	*ret = n;
	return 0;
}

static int check_dup_key(struct ybuild *b, const yaml_event_t *ev, const struct cd_ynode *map,
                         const struct cd_ynode *key)
{
	const struct cd_ynode *k;

	for (k = map->child; k && k != key; k = k->next ? k->next->next : NULL) {
		if (k->len == key->len && memcmp(k->s, key->s, k->len) == 0)
			return yfail(b, -CD_E_PARSE, &ev->start_mark,
			             "duplicate key '%s' (first at line %u)", key->s, k->mark.line);
	}
	return 0;
}

static int on_event(struct ybuild *b, const yaml_event_t *ev)
{
	struct cd_ynode *n;
	const yaml_char_t *anchor = NULL, *tag = NULL;
	int r;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	case YAML_ALIAS_EVENT:
		return yfail(b, -CD_E_PARSE, &ev->start_mark,
		             "aliases are not allowed (write the value out)");
	default:
		break;
	}
	if (anchor)
		return yfail(b, -CD_E_PARSE, &ev->start_mark,
		             "anchors are not allowed (write the value out)");
	if (tag)
		return yfail(b, -CD_E_PARSE, &ev->start_mark, "tags ('!...') are not allowed");

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.length > CD_POLICY_MAX_SCALAR)
			return yfail(b, -CD_E_LIMIT, &ev->start_mark,
			             "a value longer than %d bytes", CD_POLICY_MAX_SCALAR);
		if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
			return yfail(b, -CD_E_PARSE, &ev->start_mark, "a NUL byte in a value");
		r = add_node(b, ev, CD_Y_SCALAR, &n);
		if (r < 0)
			return r;
		n->s = cd_arena_strndup(b->arena, (const char *)ev->data.scalar.value,
		                        ev->data.scalar.length);
		if (!n->s)
			return yfail(b, -ENOMEM, &ev->start_mark, "out of memory");
		n->len = ev->data.scalar.length;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (b->depth) {
			struct cd_ynode *parent = b->stack[b->depth - 1];
			if (parent->type == CD_Y_MAP && parent->n % 2 == 1)
				return check_dup_key(b, ev, parent, n);
		}
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (b->depth >= CD_POLICY_MAX_DEPTH)
			return yfail(b, -CD_E_LIMIT, &ev->start_mark, "nested deeper than %d",
			             CD_POLICY_MAX_DEPTH);
		r = add_node(b, ev, ev->type == YAML_SEQUENCE_START_EVENT ? CD_Y_SEQ : CD_Y_MAP,
		             &n);
		if (r < 0)
			return r;
		b->stack[b->depth++] = n;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth == 0)
			return yfail(b, -CD_E_PARSE, &ev->start_mark, "unbalanced document");
		b->depth--;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (b->root)
			return yfail(b, -CD_E_PARSE, &ev->start_mark,
			             "more than one document ('---')");
		return 0;
	default:
		return 0;
	}
}

int cd_yaml_parse(struct cd_arena *arena, const char *name, const char *data, size_t len,
                  struct cd_ynode **ret, struct cd_err *err)
{
	struct ybuild b = { .arena = arena, .name = name, .err = err };
	yaml_parser_t parser;
	yaml_event_t ev;
	int r = 0, done = 0;

	if (len > CD_POLICY_MAX_BYTES)
		return cd_err_set(err, -CD_E_LIMIT, "%s: larger than %d bytes", name,
		                  CD_POLICY_MAX_BYTES);
	if (!yaml_parser_initialize(&parser))
		return cd_err_set(err, -ENOMEM, "%s: out of memory", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			const char *ctx = parser.context ? parser.context : "";
			r = yfail(&b, -CD_E_PARSE, &parser.problem_mark, "yaml: %s%s%s",
			          parser.problem ? parser.problem : "malformed", *ctx ? " " : "",
			          ctx);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		r = on_event(&b, &ev);
		yaml_event_delete(&ev);
		if (r < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (r < 0)
		return r;
	if (!b.root)
		return cd_err_set(err, -CD_E_PARSE,
		                  "%s:1:1: empty policy (hint: start with 'version: 1')", name);
	*ret = b.root;
	return 0;
}
