# cordon — the one build file.
#
#   make              build ./build/cordon (installs missing Debian packages as root)
#   make demo         build, then run a few commands through the default sandbox
#   make check        build and run every test (unit, integration, fuzz replay) in one prove
#   make check SAN=1  the same under ASan+UBSan (objects in build-san/)
#   make check-long   the long loops: 300 kill -9 per user, 20 x 4020, fresh-check
#   make fresh-check  the README's commands on a pristine debootstrap root
#   make lint         clang-format check, banned calls, cppcheck
#   make mutate       break each wall in a copy of the tree, one at a time
#                     (tests/mutate/mutations.txt): the tests must catch every
#                     one (MUTATE_FULL=1: the whole suite per mutation;
#                     MUTATE_ONLY=REGEX: some of them)
#   make fuzz         build libFuzzer targets with clang (build-fuzz/)
#   make bench        benchmarks side by side with bubblewrap, firejail, crun
#   make install      PREFIX=/usr/local
#   make deb          a Debian package in build/ (scripts/make-deb.sh)
#
# WERROR=1 turns warnings into errors (CI sets it).
# Each test runs under scripts/reap.pl: what it leaves running is ended when
# it ends, and past TEST_DEADLINE seconds it is ended itself and fails, so no
# test can hold the suite (or CI) open.
TEST_DEADLINE ?= 1200

PREFIX   ?= /usr/local
CC       ?= cc

ifeq ($(SAN),1)
B        := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
B        := build
SANFLAGS :=
endif

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
            -Wimplicit-fallthrough -Wvla -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN     += -Werror
endif
HARDEN   := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CFLAGS   ?= -O2 -g
# libpq's header only: the library is loaded on first use (util/dl.h).
ALLCFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(HARDEN) $(SANFLAGS) $(CFLAGS) -Isrc/lib \
            -I/usr/include/postgresql -MMD -MP
LDFLAGS  += -pie -Wl,-z,relro,-z,now $(SANFLAGS)
# Named directly, not through pkg-config: on a fresh machine the packages
# are installed by the first rule that runs, after this file is read.
# Linked statically (Debian's -dev packages ship the .a files): resolving
# five shared libraries cost about 1.5 ms of every `cordon run`.  libidn2
# needs libunistring after it.
LDLIBS   := -Wl,-Bstatic -lseccomp -lsodium -lsqlite3 -lyaml -ljansson -lpsl -lidn2 -lunistring -Wl,-Bdynamic -lm

LIB_SRC  := $(sort $(wildcard src/lib/*/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test-*.c))
HELP_SRC := $(sort $(wildcard tests/helpers/*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz-*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(B)/%.o)
LIB      := $(B)/libcordon.a
BIN      := $(B)/cordon
UNITS    := $(UNIT_SRC:%.c=$(B)/%)
HELPERS  := $(HELP_SRC:%.c=$(B)/%) $(patsubst tests/preload/%.c,$(B)/tests/preload/%.so,$(wildcard tests/preload/*.c))
REPLAYS  := $(FUZZ_SRC:tests/fuzz/fuzz-%.c=$(B)/tests/fuzz/replay-%)
DEPSTAMP := $(B)/.deps-build

.PHONY: all deps demo check lint mutate fuzz bench install deb clean print-ldlibs
.SECONDARY:
all: $(BIN) $(B)/cordon-oci

# The project's own files install what it needs: missing Debian packages are
# installed as root, or named with the exact apt-get command otherwise.
$(DEPSTAMP): scripts/deps.sh
	@mkdir -p $(@D)
	@sh scripts/deps.sh build
	@touch $@
deps: $(DEPSTAMP)

$(B)/%.o: %.c | $(DEPSTAMP)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# The default seccomp program is generated once at build time (see
# src/gen/gen-seccomp.c) and linked into the binary.
$(B)/gen-seccomp: $(B)/src/gen/gen-seccomp.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(B)/gen/seccomp-prebuilt.c: $(B)/gen-seccomp
	@mkdir -p $(@D)
	$< > $@.tmp && mv $@.tmp $@

$(B)/gen/seccomp-prebuilt.o: $(B)/gen/seccomp-prebuilt.c
	$(CC) $(ALLCFLAGS) -c -o $@ $<

# So is the masking scanner's pattern database (src/gen/gen-scandb.c):
# serialized, it loads in a fraction of a millisecond instead of compiling
# in ~80 ms at the start of every session that masks.  The unit tests link
# it too (test-scan checks that it is used, and what it finds).
$(B)/gen-scandb: $(B)/src/gen/gen-scandb.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(B)/gen/scan-db.c: $(B)/gen-scandb
	@mkdir -p $(@D)
	$< > $@.tmp && mv $@.tmp $@

$(B)/gen/scan-db.o: $(B)/gen/scan-db.c
	$(CC) $(ALLCFLAGS) -c -o $@ $<

GEN_OBJ  := $(B)/gen/seccomp-prebuilt.o $(B)/gen/scan-db.o

$(BIN): $(CLI_OBJ) $(GEN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(GEN_OBJ) $(LIB) $(LDLIBS)

# The OCI runtime is the same binary under another name (cmd-oci.c).
$(B)/cordon-oci: $(BIN)
	ln -sf cordon $@

$(B)/tests/unit/test-%: $(B)/tests/unit/test-%.o $(B)/gen/scan-db.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(B)/gen/scan-db.o $(LIB) $(LDLIBS)

$(B)/tests/tools/%: $(B)/tests/tools/%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Helpers run inside the sandbox: static where they can be, so that they do
# not depend on what the sandbox's /usr holds.
$(B)/tests/helpers/%: tests/helpers/%.c | $(DEPSTAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -o $@ $< -static 2>/dev/null || \
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -o $@ $<

# LD_PRELOAD objects the tests put under cordon itself (an attacker's
# timing made deterministic).
$(B)/tests/preload/%.so: tests/preload/%.c | $(DEPSTAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -fPIC -shared -o $@ $< -ldl

$(B)/tests/fuzz/replay-%: $(B)/tests/fuzz/fuzz-%.o $(B)/tests/fuzz/replay.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

demo: $(BIN)
	@sh scripts/deps.sh demo
	@sh scripts/demo.sh $(BIN)

check: $(BIN) $(B)/cordon-oci $(UNITS) $(HELPERS) $(REPLAYS) $(patsubst tests/tools/%.c,$(B)/tests/tools/%,$(wildcard tests/tools/*.c))
	@sh scripts/deps.sh test
	@rm -f $(B)/test-skips.log
	@echo "cordon: the MCP SDK and servers (npm ci, once, before the tests' timeouts run)"
	@CORDON_SRC=$(CURDIR) sh -c '. tests/mcp/setup.sh && mcp_setup' || true
	CORDON=$(abspath $(BIN)) CORDON_BUILD=$(abspath $(B)) CORDON_SRC=$(CURDIR) \
		CORDON_SKIP_LOG=$(abspath $(B))/test-skips.log \
		prove -e 'perl scripts/reap.pl --deadline $(TEST_DEADLINE)' --timer $(PROVE_FLAGS) $(UNITS) $(REPLAYS) \
		$(sort $(wildcard tests/integration/*.sh)); \
		rc=$$?; sh scripts/skip-banner.sh $(B)/test-skips.log; exit $$rc

# Not part of `check`: it rebuilds and re-tests once per mutation.
mutate: $(BIN) $(HELPERS)
	@sh scripts/deps.sh test
	@MUTATE_FULL='$(MUTATE_FULL)' MUTATE_ONLY='$(MUTATE_ONLY)' sh scripts/mutate.sh

lint:
	@sh scripts/deps.sh lint
	@sh scripts/lint.sh

# The libraries a program linked against libcordon.a needs (bench/*.sh).
print-ldlibs:
	@echo '$(LDLIBS)'

fuzz:
	@sh scripts/deps.sh fuzz
	$(MAKE) -f tests/fuzz/Makefile.fuzz

bench: $(BIN) $(HELPERS)
	@sh scripts/deps.sh bench
	@sh bench/run-all.sh $(abspath $(BIN))

install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/cordon
	ln -sf cordon $(DESTDIR)$(PREFIX)/bin/cordon-oci
	install -D -m 0644 docs/cordon.1 $(DESTDIR)$(PREFIX)/share/man/man1/cordon.1
	install -D -m 0644 docs/cordon-policy.5 $(DESTDIR)$(PREFIX)/share/man/man5/cordon-policy.5
	install -D -m 0644 docs/cordon-serve.1 $(DESTDIR)$(PREFIX)/share/man/man1/cordon-serve.1

# cordon_VERSION_ARCH.deb in $(B)/, with dpkg's tools: the binary, man
# pages, completions, the AppArmor profile, docs and examples.
deb: $(BIN)
	@sh scripts/deps.sh deb
	@sh scripts/make-deb.sh $(B)

clean:
	rm -rf build build-san build-fuzz

# The README on a pristine Debian 12 root (debootstrap, pivot_root): slow,
# needs root and the network; see scripts/fresh-check.sh.
.PHONY: fresh-check
fresh-check:
	@sh scripts/fresh-check.sh

# The long loops, before an issue is resolved (not in make check): 300
# kill -9 at random moments per user with zero orphans, the audit log's
# concurrent writers 20 times, and the pristine-root check.
.PHONY: check-long
check-long: $(BIN) $(HELPERS) $(patsubst tests/tools/%.c,$(B)/tests/tools/%,$(wildcard tests/tools/*.c))
	@sh scripts/deps.sh test
	CORDON=$(abspath $(BIN)) CORDON_BUILD=$(abspath $(B)) CORDON_SRC=$(CURDIR) \
		CORDON_KILL_LOOPS=300 CORDON_TEST_TIMEOUT=3600 \
		prove -e 'perl scripts/reap.pl --deadline 4000' --timer tests/integration/9023-kill-orphans.sh
	for i in $$(seq 20); do \
		CORDON=$(abspath $(BIN)) CORDON_BUILD=$(abspath $(B)) CORDON_SRC=$(CURDIR) \
		prove -e 'perl scripts/reap.pl --deadline $(TEST_DEADLINE)' tests/integration/4020-log-concurrency.sh || exit 1; done
	$(MAKE) fresh-check

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNITS:=.d) \
         $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/fuzz/%.d) $(B)/tests/fuzz/replay.d \
         $(B)/src/gen/gen-seccomp.d $(B)/gen/seccomp-prebuilt.d \
         $(B)/src/gen/gen-scandb.d $(B)/gen/scan-db.d \
         $(patsubst tests/tools/%.c,$(B)/tests/tools/%.d,$(wildcard tests/tools/*.c))
