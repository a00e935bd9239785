# ubxdp — top-level build. Everything lands in $(BUILD): BPF objects in
# build/bpf, skeletons in build/skel, binaries in build/bin.
#
#   make            build everything
#   make test       install missing Debian packages, build, run every suite
#   make demo       namespace topology with real UB traffic through the UB2E switch
#   make bench      ns/packet of the XDP programs beside floor programs, ICRC GB/s
#   make vmtest     the BPF and e2e suites on a Debian LTS kernel under qemu
#   make install    PREFIX=/usr/local

BUILD    ?= build
PREFIX   ?= /usr/local
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

WARN       := -Wall -Wextra -Werror
BPF_CFLAGS := -g -O2 -target bpf $(WARN) -Iheaders -Ibpf -I/usr/include/$(MULTIARCH)
CFLAGS     ?= -O2 -g
# snprintf truncation is how long names are bounded here, not a bug.
CFLAGS     += $(WARN) -Wno-format-truncation -std=gnu11 -D_GNU_SOURCE -Iheaders -Iuser/lib -I$(BUILD)/skel -MMD -MP

# ISA-L's CRC-32 is 6-10x faster than zlib's; zlib stays as fallback and cross-check.
HAVE_ISAL := $(shell test -f /usr/include/isa-l/crc.h && echo 1)
ifeq ($(HAVE_ISAL),1)
CFLAGS   += -DHAVE_ISAL
PKT_LIBS := -lisal -lz
else
PKT_LIBS := -lz
endif
BPF_LIBS := -lbpf -lelf -lz

# ---- BPF ----------------------------------------------------------------
BPF_SRCS  := $(wildcard bpf/*.bpf.c) $(wildcard bench/*.bpf.c) $(wildcard tests/bpf/*.bpf.c)
BPF_OBJS  := $(addprefix $(BUILD)/bpf/,$(notdir $(BPF_SRCS:.c=.o)))
BPF_HDRS  := $(wildcard headers/*.h bpf/*.h bpf/lib/*.h bench/*.h)
# Roles made of several programs, linked into one object so they share maps.
ROLES     := ub2e
ub2e_PARTS := ub2e_to_uboe ub2e_to_ub ub2e_tc
SKELS     := $(addprefix $(BUILD)/skel/,$(addsuffix .skel.h,$(ROLES)))

vpath %.bpf.c bpf bench tests/bpf

$(BUILD)/bpf/%.bpf.o: %.bpf.c $(BPF_HDRS) | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/bpf/%.linked.o: $$(addprefix $(BUILD)/bpf/,$$(addsuffix .bpf.o,$$($$*_PARTS)))
	$(BPFTOOL) gen object $@ $^

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.linked.o | $(BUILD)/skel
	$(BPFTOOL) gen skeleton $< name $* > $@

# ---- user code ----------------------------------------------------------
LIB_SRCS   := $(wildcard user/lib/*.c)
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB        := $(BUILD)/lib/libubxdp.a

UBCTL_SRCS := $(wildcard user/ubctl/*.c)
UBCTL_OBJS := $(UBCTL_SRCS:%.c=$(BUILD)/obj/%.o)

TOOL_SRCS  := $(wildcard user/tools/*.c)
TOOLS      := $(patsubst user/tools/%.c,$(BUILD)/bin/%,$(TOOL_SRCS))

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/bin/%,$(UNIT_SRCS))

TESTRUN_SRCS := $(wildcard tests/bpf/*.c)
TESTRUN_SRCS := $(filter-out %.bpf.c,$(TESTRUN_SRCS))
TESTRUN_OBJS := $(TESTRUN_SRCS:%.c=$(BUILD)/obj/%.o)

BENCH_SRCS := $(filter-out %.bpf.c,$(wildcard bench/*.c))
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/obj/%.o)

BINS := $(BUILD)/bin/ubctl $(TOOLS) $(UNIT_BINS)
ifneq ($(TESTRUN_SRCS),)
BINS += $(BUILD)/bin/ub2e_testrun
endif
ifneq ($(BENCH_SRCS),)
BINS += $(BUILD)/bin/ubxdp_bench
endif

all: $(BPF_OBJS) $(SKELS) $(BINS)

$(BUILD)/obj/%.o: %.c | $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BUILD)/bin/ubctl: $(UBCTL_OBJS) $(LIB) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(BPF_LIBS) $(PKT_LIBS)

$(BUILD)/bin/%: $(BUILD)/obj/user/tools/%.o $(LIB) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(PKT_LIBS)

$(BUILD)/bin/test_%: $(BUILD)/obj/tests/unit/test_%.o $(LIB) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PKT_LIBS)

$(BUILD)/bin/ub2e_testrun: $(TESTRUN_OBJS) $(LIB) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(BPF_LIBS) $(PKT_LIBS)

$(BUILD)/bin/ubxdp_bench: $(BENCH_OBJS) $(LIB) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(BPF_LIBS) $(PKT_LIBS)

$(BUILD)/bpf $(BUILD)/skel $(BUILD)/bin:
	@mkdir -p $@

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- entry points ------------------------------------------------------
deps:
	@scripts/deps.sh

# make test includes vmtest (the bpf and e2e suites again on Debian's LTS kernel
# under qemu, about 1.5 minutes), so qemu and friends are installed too.
test:
	@scripts/deps.sh --vmtest
	@$(MAKE) --no-print-directory all
	@tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@scripts/bench.sh

vmtest:
	@scripts/deps.sh --vmtest
	@$(MAKE) --no-print-directory all
	@tests/run.sh vmtest

vmtest-selftest:
	@scripts/deps.sh --vmtest
	@$(MAKE) --no-print-directory all
	@vmtest/run.sh selftest

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/bin/ubctl $(TOOLS) $(DESTDIR)$(PREFIX)/bin/

WIRESHARK_PLUGIN_DIR ?= $(HOME)/.local/lib/wireshark/plugins
install-wireshark:
	install -D -m 0644 tools/wireshark/ub.lua $(WIRESHARK_PLUGIN_DIR)/ub.lua

clean:
	rm -rf $(BUILD)

.PHONY: all deps test demo bench vmtest vmtest-selftest install install-wireshark clean
.DELETE_ON_ERROR:
.SECONDARY:
