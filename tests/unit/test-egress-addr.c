/* test-egress-addr.c — IP literals in targets and the classification of
 * resolved addresses (THREATS rows 20 and 21).  Table-driven. */
#include "../tap.h"

#include "egress/egress-addr.h"
#include "util/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

/* What cd_addr_literal makes of a target host. */
static void test_literal(void)
{
	static const struct {
		const char *in;
		int want;
		const char *text; /* for an address: cd_addr_format of the result */
	} cases[] = {
		{ "example.com", CD_LIT_NAME, NULL },
		{ "EXAMPLE.com.", CD_LIT_NAME, NULL },
		{ "0x7f.example.com", CD_LIT_NAME, NULL },
		{ "1.2.3.example", CD_LIT_NAME, NULL },
		{ "0xdeadbeef.com", CD_LIT_NAME, NULL },
		{ "localhost", CD_LIT_NAME, NULL },
		{ "192.0.2.1", CD_LIT_IPV4, "192.0.2.1" },
		{ "127.0.0.1", CD_LIT_IPV4, "127.0.0.1" },
		{ "0.0.0.0", CD_LIT_IPV4, "0.0.0.0" },
		{ "255.255.255.255", CD_LIT_IPV4, "255.255.255.255" },
		{ "[::1]", CD_LIT_IPV6, "[::1]" },
		{ "[::]", CD_LIT_IPV6, "[::]" },
		{ "[::ffff:127.0.0.1]", CD_LIT_IPV6, "[::ffff:127.0.0.1]" },
		{ "[64:ff9b::a00:1]", CD_LIT_IPV6, "[64:ff9b::a00:1]" },
		{ "[2001:db8::1]", CD_LIT_IPV6, "[2001:db8::1]" },
		/* The odd spellings: refused outright (row 21). */
		{ "2130706433", -CD_E_DENIED, NULL },
		{ "0177.0.0.1", -CD_E_DENIED, NULL },
		{ "0x7f.1", -CD_E_DENIED, NULL },
		{ "0x7f000001", -CD_E_DENIED, NULL },
		{ "0X7F.0.0.1", -CD_E_DENIED, NULL },
		{ "127.1", -CD_E_DENIED, NULL },
		{ "127.0.1", -CD_E_DENIED, NULL },
		{ "127.0.0.1.", -CD_E_DENIED, NULL },
		{ "127.000.0.1", -CD_E_DENIED, NULL },
		{ "1.0x7f", -CD_E_DENIED, NULL },
		{ "evil.0x7f", -CD_E_DENIED, NULL },
		{ "evil.127", -CD_E_DENIED, NULL },
		{ "0x", -CD_E_DENIED, NULL },
		{ "256.1.1.1", -CD_E_DENIED, NULL },
		{ "1.2.3.4.5", -CD_E_DENIED, NULL },
		{ "1.2.3.4444", -CD_E_DENIED, NULL },
		{ "0", -CD_E_DENIED, NULL },
		{ "[0:0:0:0:0:0:0:1]", -CD_E_DENIED, NULL },
		{ "[0::1]", -CD_E_DENIED, NULL },
		{ "[::FFFF:127.0.0.1]", -CD_E_DENIED, NULL },
		{ "[::ffff:7f00:1]", -CD_E_DENIED, NULL },
		{ "[fe80::1%eth0]", -CD_E_DENIED, NULL },
		{ "[fe80::1%25eth0]", -CD_E_DENIED, NULL },
		{ "::1", -CD_E_DENIED, NULL },
		{ "[::1", -EINVAL, NULL },
		{ "[]", -EINVAL, NULL },
		{ "[v1.x]", -EINVAL, NULL },
		{ "[127.0.0.1]", -EINVAL, NULL },
		{ "a:b", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
	};
	struct sockaddr_storage ss;
	char text[64];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = cd_addr_literal(cases[i].in, strlen(cases[i].in), &ss);
		is_int(r, cases[i].want, "literal '%s'", cases[i].in);
		if (cases[i].text && r > 0) {
			cd_addr_format(&ss, text, sizeof text);
			is_str(text, cases[i].text, "literal '%s' reads as %s", cases[i].in,
			       cases[i].text);
		}
	}
	is_int(cd_addr_literal("127.0.0.1\0x", 11, NULL), -EINVAL, "NUL inside refused");
	is_int(cd_addr_literal("1.2.3.4XXXX", 7, NULL), CD_LIT_IPV4, "only len bytes read");
	is_int(cd_addr_literal("example.com2130706433", 11, NULL), CD_LIT_NAME,
	       "only len bytes read (name)");
}

static int classify_text(const char *s)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof ss);
	if (strchr(s, ':')) {
		ss.ss_family = AF_INET6;
		if (inet_pton(AF_INET6, s, &((struct sockaddr_in6 *)&ss)->sin6_addr) != 1)
			return -100;
	} else {
		ss.ss_family = AF_INET;
		if (inet_pton(AF_INET, s, &((struct sockaddr_in *)&ss)->sin_addr) != 1)
			return -100;
	}
	return cd_addr_classify(&ss);
}

/* Resolved addresses, in any spelling inet_pton reads (row 20). */
static void test_classify(void)
{
	static const struct {
		const char *addr;
		enum cd_addr_class want;
	} cases[] = {
		{ "8.8.8.8", CD_ADDR_PUBLIC },
		{ "1.1.1.1", CD_ADDR_PUBLIC },
		{ "93.184.216.34", CD_ADDR_PUBLIC },
		{ "127.0.0.1", CD_ADDR_LOOPBACK },
		{ "127.255.255.254", CD_ADDR_LOOPBACK },
		{ "0.0.0.0", CD_ADDR_UNSPECIFIED },
		{ "0.1.2.3", CD_ADDR_RESERVED },
		{ "10.0.0.1", CD_ADDR_PRIVATE },
		{ "10.255.255.255", CD_ADDR_PRIVATE },
		{ "11.0.0.1", CD_ADDR_PUBLIC },
		{ "172.15.255.255", CD_ADDR_PUBLIC },
		{ "172.16.0.1", CD_ADDR_PRIVATE },
		{ "172.31.255.255", CD_ADDR_PRIVATE },
		{ "172.32.0.0", CD_ADDR_PUBLIC },
		{ "192.168.1.1", CD_ADDR_PRIVATE },
		{ "192.169.0.1", CD_ADDR_PUBLIC },
		{ "169.254.169.254", CD_ADDR_LINK_LOCAL },
		{ "169.254.0.1", CD_ADDR_LINK_LOCAL },
		{ "100.64.0.1", CD_ADDR_CGNAT },
		{ "100.127.255.255", CD_ADDR_CGNAT },
		{ "100.128.0.0", CD_ADDR_PUBLIC },
		{ "100.63.255.255", CD_ADDR_PUBLIC },
		{ "224.0.0.1", CD_ADDR_MULTICAST },
		{ "239.255.255.250", CD_ADDR_MULTICAST },
		{ "255.255.255.255", CD_ADDR_BROADCAST },
		{ "240.0.0.1", CD_ADDR_RESERVED },
		{ "192.0.0.170", CD_ADDR_RESERVED },
		{ "192.0.2.1", CD_ADDR_RESERVED },
		{ "198.51.100.7", CD_ADDR_RESERVED },
		{ "203.0.113.9", CD_ADDR_RESERVED },
		{ "198.18.0.1", CD_ADDR_RESERVED },
		{ "198.19.255.255", CD_ADDR_RESERVED },
		{ "198.20.0.0", CD_ADDR_PUBLIC },
		{ "192.88.99.1", CD_ADDR_RESERVED },
		{ "::", CD_ADDR_UNSPECIFIED },
		{ "::1", CD_ADDR_LOOPBACK },
		{ "::2", CD_ADDR_RESERVED },
		{ "2606:4700::1111", CD_ADDR_PUBLIC },
		{ "2a00:1450:4001::1", CD_ADDR_PUBLIC },
		{ "fc00::1", CD_ADDR_PRIVATE },
		{ "fd00:ec2::254", CD_ADDR_PRIVATE },
		{ "fe80::1", CD_ADDR_LINK_LOCAL },
		{ "febf::1", CD_ADDR_LINK_LOCAL },
		{ "fec0::1", CD_ADDR_PRIVATE },
		{ "ff02::1", CD_ADDR_MULTICAST },
		{ "2001:db8::1", CD_ADDR_RESERVED },
		{ "3fff::1", CD_ADDR_RESERVED },
		{ "100::1", CD_ADDR_RESERVED },
		{ "4000::1", CD_ADDR_RESERVED },
		{ "2001:2::1", CD_ADDR_RESERVED },
		/* IPv4 inside IPv6 takes the class of what it embeds. */
		{ "::ffff:127.0.0.1", CD_ADDR_LOOPBACK },
		{ "::ffff:10.1.2.3", CD_ADDR_PRIVATE },
		{ "::ffff:169.254.169.254", CD_ADDR_LINK_LOCAL },
		{ "::ffff:8.8.8.8", CD_ADDR_PUBLIC },
		{ "::ffff:0:127.0.0.1", CD_ADDR_LOOPBACK },
		{ "::127.0.0.1", CD_ADDR_LOOPBACK },
		{ "::8.8.8.8", CD_ADDR_RESERVED },
		{ "64:ff9b::127.0.0.1", CD_ADDR_LOOPBACK },
		{ "64:ff9b::a9fe:a9fe", CD_ADDR_LINK_LOCAL },
		{ "64:ff9b::8.8.8.8", CD_ADDR_PUBLIC },
		{ "64:ff9b:1::1", CD_ADDR_PRIVATE },
		{ "2002:7f00:1::1", CD_ADDR_LOOPBACK },
		{ "2002:c0a8:101::1", CD_ADDR_PRIVATE },
		{ "2002:a9fe:a9fe::", CD_ADDR_LINK_LOCAL },
		{ "2002:808:808::1", CD_ADDR_PUBLIC },
		/* Teredo: server 8.8.8.8, client ~0x80ffffff... = 127.0.0.0. */
		{ "2001:0:808:808::80ff:fffe", CD_ADDR_LOOPBACK },
		{ "2001:0:a00:1::f7f7:f7f7", CD_ADDR_PRIVATE },
		{ "2001:0:808:808::f7f7:f7f7", CD_ADDR_PUBLIC },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		is_int(classify_text(cases[i].addr), cases[i].want, "%s is %s", cases[i].addr,
		       cd_addr_class_name(cases[i].want));

	{
		struct sockaddr_storage ss;
		memset(&ss, 0, sizeof ss);
		ss.ss_family = AF_UNIX;
		is_int(cd_addr_classify(&ss), -EAFNOSUPPORT, "another family is refused");
		is_int(cd_addr_classify(NULL), -EINVAL, "NULL is refused");
	}
}

static void test_format(void)
{
	struct sockaddr_storage ss;
	char out[64];

	is_int(cd_addr_literal("[2001:db8::7]", 13, &ss), CD_LIT_IPV6, "v6 literal");
	cd_addr_set_port(&ss, 443);
	is_int(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 443, "port set");
	is_int(cd_addr_len(&ss), sizeof(struct sockaddr_in6), "v6 length");
	is_int(cd_addr_format(&ss, out, 5), -ENAMETOOLONG, "short buffer refused");
	is_int(cd_addr_format(&ss, out, sizeof out), 13, "formatted");
	is_str(out, "[2001:db8::7]", "format round-trips");
	is_str(cd_addr_class_name(CD_ADDR_CGNAT), "cgnat", "class names");
}

int main(void)
{
	tap_start(30);
	test_literal();
	test_classify();
	test_format();
	return tap_done();
}
