/* test-termfilter.c — OSC 52 and title strings are dropped from output
 * bound for a terminal, whatever their terminator and however the stream
 * is split; text, CSI colours and other OSCs pass unchanged. */
#include "../tap.h"

#include "sandbox/termfilter.h"

#include <string.h>

static const struct {
	const char *in, *want, *what;
} cases[] = {
	{ "plain text\n", "plain text\n", "text passes" },
	{ "\x1b[31mred\x1b[0m", "\x1b[31mred\x1b[0m", "CSI colours pass" },
	{ "a\x1b]52;c;ZXZpbA==\x07z", "az", "OSC 52 ended by BEL is dropped" },
	{ "a\x1b]52;c;ZXZpbA==\x1b\\z", "az", "OSC 52 ended by ST is dropped" },
	{ "a\x1b]52;c;?\x07z", "az", "an OSC 52 clipboard read is dropped" },
	{ "\x1b]0;pwned\x07ok", "ok", "OSC 0 (title and icon) is dropped" },
	{ "\x1b]1;icon\x07ok", "ok", "OSC 1 (icon) is dropped" },
	{ "\x1b]2;title\x1b\\ok", "ok", "OSC 2 (title) is dropped" },
	{ "\x1b]l;title\x07ok", "ok", "an OSC without a numeric code is dropped" },
	{ "\x1b]99999999;x\x07ok", "ok", "an OSC with an overlong code is dropped" },
	{ "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
	  "OSC 8 (hyperlinks) passes" },
	{ "\x1b]7;file://h/d\x07", "\x1b]7;file://h/d\x07", "OSC 7 passes" },
	{ "\x1b]520;x\x07", "\x1b]520;x\x07", "OSC 520 is not OSC 52" },
	{ "\x1b]2;t\x1b[1mB", "\x1b[1mB",
	  "an ESC ending a dropped string starts a CSI that passes" },
	{ "\x1b]2;t\x18ok", "ok", "CAN aborts a dropped string" },
	{ "\x1b\x1b]2;t\x07ok", "\x1bok", "ESC ESC ] 2: the first ESC passes, the title not" },
	{ "\x1b"
	  "7save",
	  "\x1b"
	  "7save",
	  "other ESC sequences pass" },
	{ "x\x1b]2", "x", "an unfinished code at the end is held, then dropped" },
};

static void run_split(const char *in, size_t len, size_t cut, char *out, size_t *olen)
{
	struct cd_termfilter f;

	cd_termfilter_init(&f);
	*olen = cd_termfilter_run(&f, in, cut, out);
	*olen += cd_termfilter_run(&f, in + cut, len - cut, out + *olen);
}

int main(void)
{
	size_t i;

	tap_start(30);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t len = strlen(cases[i].in), cut, olen, bad = 0;
		char out[256];

		run_split(cases[i].in, len, len, out, &olen);
		out[olen] = '\0';
		ok(strcmp(out, cases[i].want) == 0, "%s", cases[i].what);
		for (cut = 0; cut <= len; cut++) {
			run_split(cases[i].in, len, cut, out, &olen);
			out[olen] = '\0';
			if (strcmp(out, cases[i].want) != 0)
				bad++;
		}
		ok(bad == 0, "%s, split anywhere", cases[i].what);
	}
	{
		/* Output never exceeds the input by more than the hold. */
		struct cd_termfilter f;
		char out[4 + CD_TERMFILTER_HOLD];
		size_t n;

		cd_termfilter_init(&f);
		n = cd_termfilter_run(&f, "\x1b]12", 4, out);
		n += cd_termfilter_run(&f, "3;x", 3, out + n);
		ok(n == 7 && memcmp(out, "\x1b]123;x", 7) == 0,
		   "held bytes come out after the code");
		is_int((int)f.dropped, 0, "nothing counted as dropped");
	}
	return tap_done();
}
