# SPDX-License-Identifier: GPL-2.0-only
# One Makefile for the XDP object, its skeleton, the xnat CLI and the tests.
# `make V=1` shows the full commands.

OUTPUT   := .output
CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= cc
ARCH     := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
# Where `make install` puts things (DESTDIR is prepended to each). The
# unit goes where systemd looks for units of PREFIX (/usr/local/lib/...
# and /usr/lib/... both are), the completion where bash-completion does.
PREFIX   ?= /usr/local
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc

# Where clang -target bpf finds <asm/types.h> and friends on Debian (the
# multiarch directory). Expanded when a BPF object is first built, and then
# kept: not when make reads this file, which on a fresh machine is before
# `make deps` has installed clang.
CLANG_BPF_SYS_INCLUDES = $(eval CLANG_BPF_SYS_INCLUDES := $$(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }'))$(CLANG_BPF_SYS_INCLUDES)

BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ibpf \
	      $(CLANG_BPF_SYS_INCLUDES)
CFLAGS   ?= -g -O2
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -I$(OUTPUT) -Iuser -Iuser/lib -Ibpf \
	    -D_GNU_SOURCE
LDLIBS   := -lxdp -lbpf -linih -lnftables -lmicrohttpd -lsystemd \
	    -lmnl -lnetfilter_conntrack -ljansson -lelf -lz

# bpf/ is the router's data path, bpf/bench/ the bench's programs; their
# objects and skeletons all go flat into $(OUTPUT)/.
BPF_SRCS  := $(wildcard bpf/*.bpf.c bpf/bench/*.bpf.c)
BPF_HDRS  := $(wildcard bpf/*.h)
BPF_OBJS  := $(addprefix $(OUTPUT)/,$(notdir $(BPF_SRCS:.bpf.c=.bpf.o)))
SKELS     := $(BPF_OBJS:.bpf.o=.skel.h)
# The commands, and the library under them that unit tests link too:
# user/ the router, user/lib/ the shared helpers, user/bench/ the bench.
USER_HDRS := $(wildcard user/*.h user/lib/*.h user/bench/*.h)
CMD_SRCS  := user/main.c $(wildcard user/cmd_*.c user/bench/cmd_*.c)
LIB_SRCS  := $(filter-out $(CMD_SRCS),$(wildcard user/*.c user/lib/*.c user/bench/*.c))
CMD_OBJS  := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(CMD_SRCS))
LIB_OBJS  := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
# What the unit test binaries share (checks, the data-path fixture).
UNIT_LIB_SRCS := $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
UNIT_LIB_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%.o,$(UNIT_LIB_SRCS))

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# `make fuzz` (tests/fuzz/): the data path built again with -DXNAT_FUZZ
# (bpf/fuzz.h counts its branches), its skeleton under the router's name so
# that the unit fixture links against it, and the libFuzzer harness.
FUZZ_DIR  := $(OUTPUT)/fuzz
FUZZ_BIN  := $(FUZZ_DIR)/fuzz_xdp
FUZZ_SRCS := tests/fuzz/fuzz_xdp.c tests/fuzz/fuzz_frame.c tests/fuzz/fuzz_checks.c \
	     tests/unit/fixture.c tests/unit/fixture_setup.c tests/unit/fixture_forwarded.c \
	     tests/unit/check.c

.PHONY: all deps test unit integration check demo bench fuzz fuzz-build fuzz-corpus install uninstall clean help FORCE
all: xnat $(UNIT_BINS)

# Not part of all: a second build of the program that only the fuzzer and
# its test need (tests/integration/test_fuzz.sh builds it).
fuzz-build: $(FUZZ_BIN)

help:
	@echo 'make            build bpf/ objects, skeletons, ./xnat and unit tests'
	@echo 'make deps       install missing Debian packages (scripts/deps.sh)'
	@echo 'make test       deps, build, unit + integration tests (as root)'
	@echo 'make demo       deps, build, a namespace testbed with traffic'
	@echo 'make check      the tree structure limits and ShellCheck (scripts/'
	@echo '                check-structure.sh, check-shell.sh; also suites of'
	@echo '                make test and make unit)'
	@echo 'make fuzz       deps, build, the data-path fuzzer: FUZZ_PACKETS (10 million)'
	@echo '                mutated frames by BPF_PROG_RUN (as root; tests/fuzz/)'
	@echo 'make bench      deps, build, ./xnat bench: every mode measured (as root,'
	@echo '                under 30 min; results in bench-results/)'
	@echo 'make install    xnat, man page, systemd unit, bash completion under PREFIX'
	@echo '                (/usr/local), an example /etc/xnat/xnat.ini if none'
	@echo 'make uninstall  remove them (the config only if still the example)'
	@echo 'make clean      remove build output'
	@echo 'V=1             show full commands'

deps:
	$(Q)scripts/deps.sh

check:
	$(Q)scripts/check-structure.sh
	$(Q)scripts/check-shell.sh

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# A missing tool is named with the way to get it, not left to a shell's
# "command not found" half-way through the build.
need_tools = for t in $(1); do command -v $$t >/dev/null || \
	{ echo "$$t not found: run 'make deps' as root to install what the build needs" >&2; exit 1; }; done

vpath %.bpf.c bpf bpf/bench
$(OUTPUT)/%.bpf.o: %.bpf.c $(BPF_HDRS) | $(OUTPUT)
	$(Q)$(call need_tools,$(CLANG) $(BPFTOOL))
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .skel.h,,$(notdir $@))_bpf > $@

$(OUTPUT)/user/%.o: user/%.c $(USER_HDRS) $(BPF_HDRS) $(SKELS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The version, stamped into main.o and cmd_bench.o only: rewritten when it changes (cmp),
# so an unchanged version rebuilds nothing.
$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	$(Q)printf '#define XNAT_VERSION "%s"\n' "$$(scripts/version.sh)" >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(OUTPUT)/user/main.o: $(OUTPUT)/version.h
# The bench's report names the xnat it measured.
$(OUTPUT)/user/bench/cmd_bench.o: $(OUTPUT)/version.h

FORCE:

xnat: $(CMD_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/%.o: tests/unit/%.c $(wildcard tests/unit/*.h) $(BPF_HDRS) $(SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Iuser/bench -c $< -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(UNIT_LIB_OBJS) $(LIB_OBJS) $(SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Iuser/bench $< $(UNIT_LIB_OBJS) $(LIB_OBJS) $(LDLIBS) -o $@

$(FUZZ_DIR):
	$(Q)mkdir -p $@

$(FUZZ_DIR)/xnat.bpf.o: bpf/xnat.bpf.c $(BPF_HDRS) | $(FUZZ_DIR)
	$(Q)$(call need_tools,$(CLANG) $(BPFTOOL))
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DXNAT_FUZZ -c $< -o $@

$(FUZZ_DIR)/xnat.skel.h: $(FUZZ_DIR)/xnat.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name xnat_bpf > $@

# Only the program is instrumented (extra counters), not the harness: its
# sources are compiled without -fsanitize, which only the link (libFuzzer's
# main) gets.
FUZZ_OBJS := $(addprefix $(FUZZ_DIR)/,$(notdir $(FUZZ_SRCS:.c=.o)))
vpath %.c tests/fuzz tests/unit
$(FUZZ_DIR)/%.o: %.c $(wildcard tests/unit/*.h tests/fuzz/*.h) $(FUZZ_DIR)/xnat.skel.h $(BPF_HDRS)
	$(call msg,CC,$@)
	$(Q)$(CLANG) -I$(FUZZ_DIR) $(CFLAGS) -Itests/unit -c $< -o $@

$(FUZZ_BIN): $(FUZZ_OBJS) $(LIB_OBJS)
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) -fsanitize=fuzzer $(CFLAGS) $^ $(LDLIBS) -o $@

# The seed corpus is in the repository; this rewrites the hand-made seeds
# from their source (the regress-* inputs of past findings stay).
$(FUZZ_DIR)/corpus_gen: tests/fuzz/corpus_gen.c $(wildcard tests/unit/*.h) $(SKELS) | $(FUZZ_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-missing-field-initializers -Itests/unit $< -o $@

fuzz-corpus: $(FUZZ_DIR)/corpus_gen
	$(Q)mkdir -p tests/fuzz/corpus
	$(Q)$(FUZZ_DIR)/corpus_gen tests/fuzz/corpus

# The targets that install what is missing build in a second make, so that
# nothing of the build (not even a variable) is decided before deps ran.
test: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)tests/run.sh

unit: all
	$(Q)tests/run.sh unit

integration: all
	$(Q)tests/run.sh integration

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

fuzz: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)tests/fuzz/run.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	./xnat bench

# The config is the example only where there is none: an installed
# router's config is never overwritten. uninstall removes it only when it
# is still the unchanged example.
INSTALLED := $(SBINDIR)/xnat $(MANDIR)/man8/xnat.8 $(UNITDIR)/xnat.service \
	     $(BASHCOMPDIR)/xnat

install: all
	install -D -m 0755 xnat $(DESTDIR)$(SBINDIR)/xnat
	install -D -m 0644 user/xnat.8 $(DESTDIR)$(MANDIR)/man8/xnat.8
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' packaging/xnat.service.in \
		>$(DESTDIR)$(UNITDIR)/xnat.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/xnat.service
	install -D -m 0644 packaging/xnat.bash-completion $(DESTDIR)$(BASHCOMPDIR)/xnat
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/xnat/xnat.ini ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/xnat/xnat.ini"; \
	else \
		echo "install -D -m 0644 configs/xnat.ini $(DESTDIR)$(SYSCONFDIR)/xnat/xnat.ini"; \
		install -D -m 0644 configs/xnat.ini $(DESTDIR)$(SYSCONFDIR)/xnat/xnat.ini; \
	fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@cfg=$(DESTDIR)$(SYSCONFDIR)/xnat/xnat.ini; \
	if [ -e $$cfg ] && ! cmp -s configs/xnat.ini $$cfg; then \
		echo "keeping $$cfg: it is not the example any more"; \
	else \
		rm -f $$cfg; rmdir $(DESTDIR)$(SYSCONFDIR)/xnat 2>/dev/null || true; \
	fi

clean:
	rm -rf $(OUTPUT) xnat

.DELETE_ON_ERROR:
.SECONDARY:
