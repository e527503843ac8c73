# SPDX-License-Identifier: GPL-2.0-only
# One Makefile for the XDP object, its skeleton, the xnat CLI and the tests.
# `make V=1` shows the full commands.

OUTPUT   := .output
CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= cc
ARCH     := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
PREFIX   ?= /usr/local

# Where clang -target bpf finds <asm/types.h> and friends on Debian (the
# multiarch directory). Expanded when a BPF object is first built, and then
# kept: not when make reads this file, which on a fresh machine is before
# `make deps` has installed clang.
CLANG_BPF_SYS_INCLUDES = $(eval CLANG_BPF_SYS_INCLUDES := $$(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }'))$(CLANG_BPF_SYS_INCLUDES)

BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	      $(CLANG_BPF_SYS_INCLUDES)
CFLAGS   ?= -g -O2
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -I$(OUTPUT) -Iuser -Ibpf \
	    -D_GNU_SOURCE
LDLIBS   := -lxdp -lbpf -linih -lnftables -lmnl -lelf -lz

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_HDRS  := $(wildcard bpf/*.h)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
# The commands, and the library under them that unit tests link too.
CMD_SRCS  := user/main.c $(wildcard user/cmd_*.c)
LIB_SRCS  := $(filter-out $(CMD_SRCS),$(wildcard user/*.c))
CMD_OBJS  := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(CMD_SRCS))
LIB_OBJS  := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all deps test unit integration demo bench install clean help
all: xnat $(UNIT_BINS)

help:
	@echo 'make            build bpf/ objects, skeletons, ./xnat and unit tests'
	@echo 'make deps       install missing Debian packages (scripts/deps.sh)'
	@echo 'make test       deps, build, unit + integration tests (as root)'
	@echo 'make demo       deps, build, a namespace testbed with traffic'
	@echo 'make bench      deps, build, ./xnat bench: every mode measured (as root,'
	@echo '                under 30 min; results in bench-results/)'
	@echo 'make install    install xnat and its man page under PREFIX'
	@echo 'make clean      remove build output'
	@echo 'V=1             show full commands'

deps:
	$(Q)scripts/deps.sh

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# A missing tool is named with the way to get it, not left to a shell's
# "command not found" half-way through the build.
need_tools = for t in $(1); do command -v $$t >/dev/null || \
	{ echo "$$t not found: run 'make deps' as root to install what the build needs" >&2; exit 1; }; done

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(OUTPUT)
	$(Q)$(call need_tools,$(CLANG) $(BPFTOOL))
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .skel.h,,$(notdir $@))_bpf > $@

$(OUTPUT)/user/%.o: user/%.c $(wildcard user/*.h) $(BPF_HDRS) $(SKELS) | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

xnat: $(CMD_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS) $(SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit $< $(LIB_OBJS) $(LDLIBS) -o $@

# The targets that install what is missing build in a second make, so that
# nothing of the build (not even a variable) is decided before deps ran.
test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/run.sh

unit: all
	$(Q)tests/run.sh unit

integration: all
	$(Q)tests/run.sh integration

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	./xnat bench

install: all
	install -D -m 0755 xnat $(DESTDIR)$(PREFIX)/sbin/xnat
	install -D -m 0644 user/xnat.8 $(DESTDIR)$(PREFIX)/share/man/man8/xnat.8

clean:
	rm -rf $(OUTPUT) xnat

.DELETE_ON_ERROR:
.SECONDARY:
