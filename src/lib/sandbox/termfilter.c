/* termfilter.c — drop OSC 52 and title strings from a byte stream (see
 * termfilter.h).  A small state machine over the bytes; no allocation. */
#include "termfilter.h"

#include <string.h>

enum {
	TF_TEXT,     /* passing bytes through */
	TF_ESC,      /* held: ESC */
	TF_CODE,     /* held: ESC ] and digits so far */
	TF_DROP,     /* inside a dropped string */
	TF_DROP_ESC, /* an ESC inside a dropped string: ST, or something new */
};

#define ESC 0x1b
#define BEL 0x07
#define CAN 0x18
#define SUB 0x1a

void cd_termfilter_init(struct cd_termfilter *f)
{
	memset(f, 0, sizeof *f);
	f->state = TF_TEXT;
}

/* The code held after ESC ]: dropped when it is 0, 1, 2 or 52, or not a
 * number at all. */
static int drop_code(const struct cd_termfilter *f)
{
	unsigned v = 0;
	size_t i;

	if (f->nheld <= 2)
		return 1;
	for (i = 2; i < f->nheld; i++)
		v = v * 10 + (unsigned)(f->held[i] - '0');
	return v == 0 || v == 1 || v == 2 || v == 52;
}

static size_t flush(struct cd_termfilter *f, char *out)
{
	size_t n = f->nheld;

	memcpy(out, f->held, n);
	f->nheld = 0;
	return n;
}

size_t cd_termfilter_run(struct cd_termfilter *f, const char *in, size_t len, char *out)
{
	size_t i = 0, o = 0;

	while (i < len) {
		char c = in[i];

		switch (f->state) {
		case TF_TEXT:
			if (c == ESC) {
				f->held[0] = c;
				f->nheld = 1;
				f->state = TF_ESC;
			} else {
				out[o++] = c;
			}
			i++;
			break;
		case TF_ESC:
			if (c == ']') {
				f->held[f->nheld++] = c;
				f->state = TF_CODE;
				i++;
			} else {
				o += flush(f, out + o);
				f->state = TF_TEXT; /* c again, as text */
			}
			break;
		case TF_CODE:
			if (c >= '0' && c <= '9' && f->nheld < CD_TERMFILTER_HOLD - 1) {
				f->held[f->nheld++] = c;
				i++;
			} else if (c == ';' && f->nheld > 2 && !drop_code(f)) {
				o += flush(f, out + o); /* an OSC we pass: it goes on as text */
				f->state = TF_TEXT;
			} else {
				f->nheld = 0; /* dropped from its ESC ] on */
				f->dropped++;
				f->state = TF_DROP; /* c again, inside it */
			}
			break;
		case TF_DROP:
			if (c == ESC)
				f->state = TF_DROP_ESC;
			else if (c == BEL || c == CAN || c == SUB)
				f->state = TF_TEXT;
			i++;
			break;
		case TF_DROP_ESC:
			if (c == '\\') {
				f->state = TF_TEXT;
				i++;
			} else {
				/* The string ended at that ESC, which starts something
				 * new: hold it and look at c after it. */
				f->held[0] = ESC;
				f->nheld = 1;
				f->state = TF_ESC;
			}
			break;
		}
	}
	return o;
}
