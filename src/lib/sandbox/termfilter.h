/* termfilter.h — strip the terminal control strings that act beyond the
 * screen from a sandbox's output before it reaches the operator's
 * terminal: OSC 52 (the clipboard: set, or read back as typed input),
 * OSC 0, 1 and 2 (window and icon titles, which a later title report
 * would type back) and any OSC whose code is not a number.  Everything
 * else passes unchanged: text, CSI sequences (colours, cursor), other
 * OSCs (hyperlinks, working directory).
 *
 * Trust boundary: the input is the sandboxed command's output, hostile.
 * A string is dropped from its ESC ] to its terminator (BEL, ESC \, or
 * CAN/SUB, which abort it; an ESC starting anything else ends it and is
 * kept); a sequence may be split across calls.  Bytes still held when the
 * stream ends (an unfinished ESC ] and code) are dropped.
 */
#ifndef CD_TERMFILTER_H
#define CD_TERMFILTER_H

#include <stddef.h>

#define CD_TERMFILTER_HOLD 8 /* at most this many held bytes: ESC ] and a code */

struct cd_termfilter {
	int state;
	size_t nheld;
	char held[CD_TERMFILTER_HOLD];
	unsigned long dropped; /* strings dropped so far */
};

void cd_termfilter_init(struct cd_termfilter *f);

/* Filter len bytes of in into out, which must have room for
 * len + CD_TERMFILTER_HOLD bytes.  Returns the number of bytes written. */
size_t cd_termfilter_run(struct cd_termfilter *f, const char *in, size_t len, char *out);

#endif
