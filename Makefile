# ubxdp — top-level build. Everything lands in $(BUILD): BPF objects in
# build/bpf, skeletons in build/skel, binaries in build/bin.
#
#   make            build everything
#   make test       install missing Debian packages, build, run every suite
#   make demo       namespace topology with real UB traffic through the UB2E switch
#   make fuzz       the UB2E fuzzer, 1,000,000 frames per program, and the parser fuzz (UB2E_FUZZ_SEED=N replays)
#   make bench      ns/packet of the XDP programs beside floor programs, ICRC GB/s, ...,
#                   ubperf beside Soft-RoCE in the vmtest guest
#   make vmtest     the BPF and e2e suites on a Debian LTS kernel under qemu
#   make install    PREFIX=/usr/local (DESTDIR, BINDIR, LIBDIR, ...): docs/INSTALL.md; make uninstall
#   make progs      only what make install installs (no test)
#   make version    the version ubctl --version prints (scripts/version.sh); make dist: a tarball
#   make man        docs/*.[18] again from docs/man/*.in and the tools' option tables

BUILD    ?= build
# The library blocks below define rules before "all" does.
.DEFAULT_GOAL := all
PREFIX   ?= /usr/local
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

WARN       := -Wall -Wextra -Werror
BPF_CFLAGS := -g -O2 -target bpf $(WARN) -Iheaders -Ibpf -I/usr/include/$(MULTIARCH)
CFLAGS     ?= -O2 -g
# snprintf truncation is how long names are bounded here, not a bug.
# Includes say where they come from: "transport/tp.h" (user/), the wire and map
# layouts shared with BPF by bare name (headers/), skeletons (build/skel).
CFLAGS     += $(WARN) -Wno-format-truncation -std=gnu11 -D_GNU_SOURCE -Iuser -Iheaders -I$(BUILD)/skel -MMD -MP

# ISA-L's CRC-32 is 6-10x faster than zlib's; zlib stays as fallback and cross-check.
HAVE_ISAL := $(shell test -f /usr/include/isa-l/crc.h && echo 1)
ifeq ($(HAVE_ISAL),1)
CFLAGS   += -DHAVE_ISAL
PKT_LIBS := -lisal -lz
else
PKT_LIBS := -lz
endif
BPF_LIBS := -lbpf -lelf -lz
XDP_LIBS := -lxdp $(BPF_LIBS)

# ---- BPF ----------------------------------------------------------------
BPF_SRCS  := $(wildcard bpf/*.bpf.c) $(wildcard bench/*.bpf.c) $(wildcard tests/bpf/*.bpf.c)
BPF_OBJS  := $(addprefix $(BUILD)/bpf/,$(notdir $(BPF_SRCS:.c=.o)))
BPF_HDRS  := $(wildcard headers/*.h bpf/*.h bpf/lib/*.h bpf/wps_ingress/*.h bench/*.h)
# Roles made of several programs, linked into one object so they share maps.
ROLES     := ub2e ub_endpoint wps_egress
ub2e_PARTS := ub2e_to_uboe ub2e_to_ub ub2e_tc ub2e_cfg
ROLES     += wps_ingress wps_boundary
wps_ingress_PARTS := wps_ingress
wps_boundary_PARTS := wps_boundary
# The WPS ingress claims Flow IDs with cmpxchg: BPF atomics need ISA v3.
$(BUILD)/bpf/wps_ingress.bpf.o: BPF_CFLAGS += -mcpu=v3
# The UB2E fast path: v3's 32-bit ALU and jumps drop the zero-extending
# shift pairs of 32-bit compares (about 2% of ub2e_to_uboe / ub2e_to_ub in
# bench/xdp_bench.c's side-by-side rounds; the floors stay at the default).
$(addprefix $(BUILD)/bpf/,$(addsuffix .bpf.o,ub2e_to_uboe ub2e_to_ub)): BPF_CFLAGS += -mcpu=v3
ub_endpoint_PARTS := ub_endpoint
wps_egress_PARTS := wps_egress
ROLES     += caqm
caqm_PARTS := caqm_stage
# Finds the NPI blocks of a switch's table for ubctl (user/io/ub2e_tables.c).
ROLES     += ub2e_blocks
ub2e_blocks_PARTS := ub2e_blocks
SKELS     := $(addprefix $(BUILD)/skel/,$(addsuffix .skel.h,$(ROLES)))

vpath %.bpf.c bpf bench tests/bpf

$(BUILD)/bpf/%.bpf.o: %.bpf.c $(BPF_HDRS) | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/bpf/%.linked.o: $$(addprefix $(BUILD)/bpf/,$$(addsuffix .bpf.o,$$($$*_PARTS)))
	$(BPFTOOL) gen object $@ $^

$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.linked.o | $(BUILD)/skel
	$(BPFTOOL) gen skeleton $< name $* > $@

# ---- libraries ------------------------------------------------------------
# A tree: a library's files call into and include only its own and those of
# the libraries below it (tests/lint/check_layers.py reads the _DEPS lines of
# this block). One block per library user/<name>/: <name>_DEPS the libraries
# it uses (below it), <name>_LIBS the system libraries its own objects link
# on; its archive is $(BUILD)/lib/libubxdp_<name>.a.

# Pure code: UB frames (build, parse), ICRC, NPI map plans, configuration and
# option parsing. No I/O library: it links without libbpf.
lib_DEPS       :=
lib_LIBS       := $(PKT_LIBS)
# The kernel I/O of the roles: BPF maps, pins and links, ports read by ioctl;
# netlink (nl.c, on libmnl): routes, neighbours, links, ethtool features.
io_DEPS        := lib
io_LIBS        := $(BPF_LIBS) -ljson-c -lmnl -lpthread
# The UB transport core (sans-I/O) and its congestion controls.
transport_DEPS := lib
transport_LIBS :=
# The AF_XDP port.
xsk_DEPS       :=
xsk_LIBS       := $(XDP_LIBS) -lpthread
# The UBoE endpoint: the transport over AF_XDP.
endpoint_DEPS  := transport xsk io lib
endpoint_LIBS  :=
# WPS: configuration, the watch agent's decisions, the egress's reorder engine and its AF_XDP loop.
wps_DEPS       := xsk io lib
wps_LIBS       := $(BPF_LIBS) -lpthread
LIBRARIES      := lib io transport xsk endpoint wps

# $(call closure,L...): L and every library below, each after all that need it (link order).
uniq_last = $(if $1,$(call uniq_last,$(filter-out $(lastword $1),$1)) $(lastword $1))
closure   = $(strip $(call uniq_last,$(foreach l,$1,$l $(call closure,$($l_DEPS)))))
archives  = $(foreach l,$(call closure,$1),$(BUILD)/lib/libubxdp_$l.a)
syslibs   = $(strip $(call uniq_last,$(foreach l,$(call closure,$1),$($l_LIBS))))

define LIBRARY
$1_SRCS := $$(wildcard user/$1/*.c)
$(BUILD)/lib/libubxdp_$1.a: $$($1_SRCS:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $$(dir $$@)
	rm -f $$@; $$(AR) rcs $$@ $$^
# Every object of the library and of those below it, linked into a program on
# their _LIBS alone: a library that reaches above itself, or needs a system
# library it does not say, fails the build here.
$(BUILD)/lib/linkcheck/$1: $(call archives,$1)
	@mkdir -p $$(dir $$@)
	printf 'int main(void) { return 0; }\n' | $$(CC) $$(LDFLAGS) -x c -o $$@ - -x none \
		-Wl,--whole-archive $$^ -Wl,--no-whole-archive $(call syslibs,$1)
endef
$(foreach l,$(LIBRARIES),$(eval $(call LIBRARY,$l)))
LINKCHECKS := $(addprefix $(BUILD)/lib/linkcheck/,$(LIBRARIES))

# ---- programs ---------------------------------------------------------------
# Each links the libraries it uses, $(call archives,...), and their $(call syslibs,...).
UBCTL_SRCS := $(wildcard user/ubctl/*.c)
UBCTL_OBJS := $(UBCTL_SRCS:%.c=$(BUILD)/obj/%.o)

TOOL_SRCS  := $(wildcard user/tools/*.c)
TOOLS      := $(patsubst user/tools/%.c,$(BUILD)/bin/%,$(TOOL_SRCS))

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/bin/%,$(UNIT_SRCS))

TESTRUN_SRCS := $(wildcard tests/bpf/*.c)
TESTRUN_SRCS := $(filter-out %.bpf.c tests/bpf/wps_testrun.c tests/bpf/endpoint_testrun.c tests/bpf/wps_egress_testrun.c,$(TESTRUN_SRCS))
TESTRUN_OBJS := $(TESTRUN_SRCS:%.c=$(BUILD)/obj/%.o)

BENCH_SRCS := $(filter-out %.bpf.c bench/wps_bench.c bench/udp_pingpong.c,$(wildcard bench/*.c))
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/obj/%.o)

UBPERF_SRCS := $(wildcard user/ubperf/*.c)
EP_TOOLS   := $(patsubst tests/endpoint/%.c,$(BUILD)/bin/%,$(wildcard tests/endpoint/*.c))

# liburma: URMA (UB's user-space API) over the endpoint, a shared library of
# PIC objects ($(BUILD)/pic) of user/urma and the libraries below it, exporting
# urma_* only (user/urma/liburma.map); the example and the API test link it
# as an application would. --gc-sections drops what URMA never calls (the
# JSON of io/caqm_pins.c among it), so it links on less than its libraries do.
urma_DEPS    := endpoint
urma_LIBS    := $(XDP_LIBS) -lmnl $(PKT_LIBS) -lpthread
URMA_SRCS    := $(wildcard user/urma/*.c)
URMA_SO_SRCS := $(URMA_SRCS) $(foreach l,$(call closure,$(urma_DEPS)),$($l_SRCS))
URMA_SOVER   := 0
URMA_VER     := 0.1.0
URMA_SO      := $(BUILD)/lib/liburma.so.$(URMA_VER)
URMA_PC      := $(BUILD)/lib/pkgconfig/urma.pc
URMA_BINS    := $(BUILD)/bin/urma_example $(BUILD)/bin/urma_api_test $(BUILD)/bin/urma_workers_test \
		$(BUILD)/bin/urma_rnr_test $(BUILD)/bin/urma_spread_test $(BUILD)/bin/urma_jumbo_test

BINS := $(LINKCHECKS) $(BUILD)/bin/ubctl $(BUILD)/bin/ubcaqm $(TOOLS) $(UNIT_BINS) $(EP_TOOLS) $(BUILD)/bin/endpoint_testrun
BINS += $(URMA_SO) $(URMA_PC) $(URMA_BINS)
BINS += $(BUILD)/bin/wps_egress_testrun $(BUILD)/bin/wps_delayline $(BUILD)/lib/many_cpus.so \
	$(BUILD)/lib/slow_xsk.so
ifneq ($(UBPERF_SRCS),)
BINS += $(BUILD)/bin/ubperf
endif
ifneq ($(TESTRUN_SRCS),)
BINS += $(BUILD)/bin/ub2e_testrun
endif
BINS += $(BUILD)/bin/wps_testrun $(BUILD)/bin/wps_bench $(BUILD)/bin/udp_pingpong
ifneq ($(BENCH_SRCS),)
BINS += $(BUILD)/bin/ubxdp_bench
endif

all: $(BPF_OBJS) $(SKELS) $(BINS) $(BUILD)/bash-completion/ubctl

$(BUILD)/obj/%.o: %.c | $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# LD_PRELOAD shims (workers.sh): a kernel of more possible CPUs than cpu_set_t
# holds; a host slow to make AF_XDP sockets.
$(BUILD)/lib/many_cpus.so $(BUILD)/lib/slow_xsk.so: $(BUILD)/lib/%.so: tests/endpoint/shim/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/pic/%.o: %.c | $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -ffunction-sections -fdata-sections -Iuser/urma/include -c $< -o $@

$(URMA_SO): $(URMA_SO_SRCS:%.c=$(BUILD)/pic/%.o) user/urma/liburma.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,liburma.so.$(URMA_SOVER) -Wl,--version-script=user/urma/liburma.map \
		-Wl,--gc-sections -Wl,--no-undefined $(LDFLAGS) -o $@ $(filter %.o,$^) \
		$(urma_LIBS)
	ln -sf liburma.so.$(URMA_VER) $(BUILD)/lib/liburma.so.$(URMA_SOVER)
	ln -sf liburma.so.$(URMA_SOVER) $(BUILD)/lib/liburma.so

URMA_PC_LIBDIR = $(BUILD)/lib
$(URMA_PC): dist/urma.pc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(abspath .)|' -e 's|@LIBDIR@|$(abspath $(URMA_PC_LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(abspath user/urma/include)|' -e 's|@VERSION@|$(URMA_VER)|' $< > $@

# Built against the public headers alone, as an application outside the tree is.
URMA_APP_CFLAGS := -O2 -g $(WARN) -std=gnu11 -Iuser/urma/include
URMA_APP_LIBS   := -L$(BUILD)/lib -lurma -Wl,-rpath,'$$ORIGIN/../lib' -lpthread
$(BUILD)/bin/urma_example: user/urma/example/urma_example.c $(wildcard user/urma/include/*.h) $(URMA_SO) | $(BUILD)/bin
	$(CC) $(URMA_APP_CFLAGS) -o $@ $< $(URMA_APP_LIBS)

$(BUILD)/bin/urma_api_test: tests/urma/api_test.c tests/urma/two_ends.h $(wildcard user/urma/include/*.h) $(URMA_SO) | $(BUILD)/bin
	$(CC) $(URMA_APP_CFLAGS) $(LDFLAGS) -o $@ $< $(URMA_APP_LIBS) -lcmocka -lbpf

# liburma and its API test under AddressSanitizer, in $(BUILD)/asan
# (tests/urma/run's *_asan tests build it): the test links the runtime, so
# that it comes first.
urma-asan:
	@env CFLAGS='-O2 -g -fsanitize=address -fno-omit-frame-pointer' LDFLAGS=-fsanitize=address \
		$(MAKE) --no-print-directory BUILD=$(BUILD)/asan $(BUILD)/asan/bin/urma_api_test

$(BUILD)/bin/urma_workers_test $(BUILD)/bin/urma_spread_test: $(BUILD)/bin/urma_%_test: tests/urma/%_test.c \
		tests/urma/two_ends.h tests/urma/write_bench.h $(wildcard user/urma/include/*.h) $(URMA_SO) | $(BUILD)/bin
	$(CC) $(URMA_APP_CFLAGS) -o $@ $< $(URMA_APP_LIBS)

$(BUILD)/bin/urma_rnr_test $(BUILD)/bin/urma_jumbo_test: $(BUILD)/bin/urma_%_test: tests/urma/%_test.c \
		tests/urma/two_ends.h $(wildcard user/urma/include/*.h) $(URMA_SO) | $(BUILD)/bin
	$(CC) $(URMA_APP_CFLAGS) -o $@ $< $(URMA_APP_LIBS)

# From the tags (git describe), or VERSION in a tarball: scripts/version.sh.
# $(BUILD)/version changes when the version does, so ubctl is rebuilt then.
UBXDP_VERSION := $(shell scripts/version.sh)
$(BUILD)/obj/user/ubctl/main.o: CFLAGS += -DUBXDP_VERSION='"$(UBXDP_VERSION)"'
$(BUILD)/obj/user/ubctl/main.o: $(BUILD)/version
$(BUILD)/version: FORCE
	@mkdir -p $(dir $@)
	@echo '$(UBXDP_VERSION)' | cmp -s - $@ || echo '$(UBXDP_VERSION)' > $@

version:
	@echo '$(UBXDP_VERSION)'

# A source tarball, $(BUILD)/ubxdp-VERSION.tar.gz, of HEAD, its VERSION the full version.
dist:
	rm -rf $(BUILD)/dist && mkdir -p $(BUILD)/dist
	git archive --prefix=ubxdp-$(UBXDP_VERSION)/ HEAD | tar -x -C $(BUILD)/dist
	echo '$(UBXDP_VERSION)' > $(BUILD)/dist/ubxdp-$(UBXDP_VERSION)/VERSION
	tar -C $(BUILD)/dist -czf $(BUILD)/ubxdp-$(UBXDP_VERSION).tar.gz ubxdp-$(UBXDP_VERSION)
	rm -rf $(BUILD)/dist
	@echo $(BUILD)/ubxdp-$(UBXDP_VERSION).tar.gz

# wps: the next hop's MAC parsed as the WPS configuration parses it.
$(BUILD)/bin/ubperf: $(UBPERF_SRCS:%.c=$(BUILD)/obj/%.o) $(call archives,endpoint wps) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,endpoint wps) -lm -ljson-c

$(EP_TOOLS): $(BUILD)/bin/%: $(BUILD)/obj/tests/endpoint/%.o $(call archives,endpoint) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,endpoint)

$(BUILD)/bin/endpoint_testrun: $(BUILD)/obj/tests/bpf/endpoint_testrun.o $(BUILD)/obj/tests/bpf/fixture.o $(call archives,endpoint) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,endpoint)

$(BUILD)/bin/wps_delayline: $(BUILD)/obj/tests/wps_egress/delayline.o | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/bin/wps_egress_testrun: $(BUILD)/obj/tests/bpf/wps_egress_testrun.o $(BUILD)/obj/tests/bpf/fixture.o $(call archives,wps) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,wps)

$(BUILD)/bin/ubctl: $(UBCTL_OBJS) $(call archives,wps) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,wps) -ljson-c

# The tools, each on the library it uses.
ubpkt_USES  := lib
tpsim_USES  := transport
$(BUILD)/bin/%: $(BUILD)/obj/user/tools/%.o $$(call archives,$$($$*_USES)) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,$($*_USES))

# The unit tests: the pure parts of every library; the endpoint's only where
# a test says so (test_NAME_USES), its archive linked for a pure function.
UNIT_USES := wps transport
test_ep_mtu_USES := endpoint
test_dev_lock_USES := endpoint
# a busy host's slow sleeps, faked
$(BUILD)/bin/test_dev_lock: LDFLAGS += -Wl,--wrap=nanosleep
# a kernel of more CPUs than a cpu_set_t holds, faked
$(BUILD)/bin/test_cpus: LDFLAGS += -Wl,--wrap=sched_getaffinity,--wrap=pthread_setaffinity_np
$(BUILD)/bin/test_%: $(BUILD)/obj/tests/unit/test_%.o $$(call archives,$(UNIT_USES) $$(test_$$*_USES)) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(call syslibs,$(UNIT_USES) $(test_$*_USES))

# The handoff ring's tests under ThreadSanitizer too, where the compiler has
# it: a missing acquire or release shows as a data race on a slot's bytes.
# Without it, one test skipped that says so (NO_TSAN).
HAVE_TSAN := $(shell printf 'int main(void){return 0;}' | $(CC) -fsanitize=thread -x c -o /dev/null - 2>/dev/null && echo 1)
$(BUILD)/bin/test_xsk_handoff_tsan: tests/unit/test_xsk_handoff_tsan.c tests/unit/test_xsk_handoff.c \
		user/xsk/xsk_handoff.c user/xsk/xsk_handoff.h | $(BUILD)/bin
	$(CC) -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE -Iuser -Itests/unit $(if $(HAVE_TSAN),-fsanitize=thread,-DNO_TSAN) \
		-o $@ tests/unit/test_xsk_handoff_tsan.c user/xsk/xsk_handoff.c -lcmocka -lpthread
# The parser fuzz checks frame_parse.c against the fuzzers' own decoder.
$(BUILD)/bin/test_ubpkt_ref: $(BUILD)/obj/tests/bpf/ubref.o $(BUILD)/obj/tests/bpf/ubmutate.o
# ubperf's keyed message bytes: a module of ubperf, not of the library.
$(BUILD)/bin/test_payload: $(BUILD)/obj/user/ubperf/payload.o
$(BUILD)/bin/test_ubperf_ctl: $(BUILD)/obj/user/ubperf/ctl.o
# liburma's control message codec, outside the shared library.
$(BUILD)/bin/test_urma_ctl: $(BUILD)/obj/user/urma/ctl.o
$(BUILD)/obj/user/urma/ctl.o $(BUILD)/obj/tests/unit/test_urma_ctl.o: CPPFLAGS += -Iuser/urma/include
# A channel's nonce: getrandom scripted by the test.
$(BUILD)/bin/test_urma_nonce: $(BUILD)/obj/user/urma/ctl.o
$(BUILD)/bin/test_urma_nonce: LDFLAGS += -Wl,--wrap=getrandom
$(BUILD)/obj/tests/unit/test_urma_nonce.o: CPPFLAGS += -Iuser/urma/include
# A JFC's ring of records, driven by threads without the library.
$(BUILD)/bin/test_urma_cr_ring: $(BUILD)/obj/user/urma/cr_ring.o
$(BUILD)/obj/user/urma/cr_ring.o $(BUILD)/obj/tests/unit/test_urma_cr_ring.o: CPPFLAGS += -Iuser/urma/include
$(BUILD)/bin/test_urma_cr_ring: LDFLAGS += -lpthread
# ubcaqm is ubctl caqm under the name it had as a tool of its own (user/ubctl/caqm.c).
$(BUILD)/bin/ubcaqm: $(BUILD)/bin/ubctl
	ln -sf ubctl $@

$(BUILD)/bin/ub2e_testrun: $(TESTRUN_OBJS) $(call archives,io) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,io) -lm

$(BUILD)/bin/wps_testrun: $(BUILD)/obj/tests/bpf/wps_testrun.o $(BUILD)/obj/tests/bpf/fixture.o $(call archives,wps) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,wps)

$(BUILD)/bin/wps_bench: $(BUILD)/obj/bench/wps_bench.o $(call archives,wps) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,wps)

# The kernel's UDP ping-pong, beside ubperf's small-message latency (bench_endpoint.sh).
$(BUILD)/bin/udp_pingpong: $(BUILD)/obj/bench/udp_pingpong.o | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/bin/ubxdp_bench: $(BENCH_OBJS) $(call archives,wps transport) | $(BUILD)/bin
	$(CC) $(LDFLAGS) -o $@ $^ $(call syslibs,wps transport) -lm

# libFuzzer targets (clang). FUZZ_SECONDS per target; an input that runs 10 s is a hang.
FUZZ_SECONDS ?= 60
WPS_REORDER_SRCS := $(wildcard user/wps/reorder*.c)
$(BUILD)/fuzz/fuzz_wps_reorder: tests/fuzz/fuzz_wps_reorder.c $(WPS_REORDER_SRCS) $(wildcard headers/*.h user/wps/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -DWPS_FUZZ_LIBFUZZER -Iuser -Iheaders \
		tests/fuzz/fuzz_wps_reorder.c $(WPS_REORDER_SRCS) -o $@

fuzz-wps: $(BUILD)/fuzz/fuzz_wps_reorder
	@mkdir -p $(BUILD)/fuzz/corpus-wps-reorder
	$< -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 $(BUILD)/fuzz/corpus-wps-reorder

$(BUILD)/bpf $(BUILD)/skel $(BUILD)/bin:
	@mkdir -p $@

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)

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

# The last part runs in the vmtest guest (Soft-RoCE needs its kernel), so qemu too.
# The text goes to $(BUILD)/bench/bench.txt as well, beside the pictures the
# scripts draw there (bench/out.sh); the first script that fails stops it.
bench: deps
	@scripts/deps.sh --vmtest
	@$(MAKE) --no-print-directory all
	@mkdir -p $(BUILD)/bench
	@BENCH_OUT=$(abspath $(BUILD))/bench bash -o pipefail -c '{ scripts/bench.sh && scripts/bench_urma.sh && scripts/wps_bench.sh && \
		scripts/bench_rxe.sh; } 2>&1 | tee $(BUILD)/bench/bench.txt'

# Long fuzzing runs; make test runs each target briefly. One target per engine.
fuzz: fuzz-ub2e fuzz-transport fuzz-wps fuzz-cc

# The bpf suite with the UB2E fuzzer at 1,000,000 frames per program instead of
# 20,000, and the unit suite with the parser fuzz at 20,000,000 instead of 1,000,000.
fuzz-ub2e: deps
	@$(MAKE) --no-print-directory all
	@UB2E_FUZZ_COUNT=$${UB2E_FUZZ_COUNT:-1000000} ENDPOINT_FUZZ_COUNT=$${ENDPOINT_FUZZ_COUNT:-1000000} UBPKT_FUZZ_COUNT=$${UBPKT_FUZZ_COUNT:-20000000} tests/run.sh unit bpf

fuzz-transport:
	@$(MAKE) --no-print-directory $(BUILD)/bin/test_transport_fuzz
	TP_FUZZ_ITERS=$${TP_FUZZ_ITERS:-5000000} $(BUILD)/bin/test_transport_fuzz

fuzz-cc:
	@$(MAKE) --no-print-directory $(BUILD)/bin/test_cc_fuzz
	CC_FUZZ_ITERS=$${CC_FUZZ_ITERS:-1000000} $(BUILD)/bin/test_cc_fuzz

vmtest:
	@scripts/deps.sh --vmtest
	@$(MAKE) --no-print-directory all
	@tests/run.sh vmtest

vmtest-selftest:
	@scripts/deps.sh --vmtest
	@$(MAKE) --no-print-directory all
	@vmtest/run.sh selftest

# ---- install ---------------------------------------------------------------
# What make install installs, built without any test: ubctl, ubperf, the tools,
# liburma (and its example), bash completion. docs/INSTALL.md lists where each lands.
PROGS := $(BUILD)/bin/ubctl $(BUILD)/bin/ubcaqm $(BUILD)/bin/ubperf $(TOOLS) $(URMA_SO) $(BUILD)/bin/urma_example
PROGS += $(BUILD)/bash-completion/ubctl
progs: $(PROGS)

# The completion reads the commands from ubctl's own help (its command tables) as it runs.
$(BUILD)/bash-completion/ubctl: dist/bash-completion/ubctl.in
	@mkdir -p $(dir $@)
	cp $< $@

BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
# systemd reads units and sysctl.d drop-ins under <prefix>/lib for /usr and /usr/local.
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSCTL_DIR ?= $(PREFIX)/lib/sysctl.d
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
UNITS := ubxdp-ub2e@.service ubxdp-wps-ingress@.service ubxdp-wps-ingress-watch@.service ubxdp-wps-egress@.service
URMA_HDRS := urma_api.h urma_types.h urma_opcode.h
# One configuration directory per unit, /etc/ubxdp/<role>/<instance>.conf.
CONF_DIRS := ub2e wps-ingress wps-egress

install: progs
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/bin/ubctl $(BUILD)/bin/ubperf $(BUILD)/bin/urma_example $(TOOLS) $(DESTDIR)$(BINDIR)/
	ln -sf ubctl $(DESTDIR)$(BINDIR)/ubcaqm
	install -D -m 0644 docs/ubctl.8 $(DESTDIR)$(MANDIR)/man8/ubctl.8
	install -D -m 0644 docs/ubpkt.8 $(DESTDIR)$(MANDIR)/man8/ubpkt.8
	install -D -m 0644 docs/ubcaqm.8 $(DESTDIR)$(MANDIR)/man8/ubcaqm.8
	install -D -m 0644 docs/ubperf.1 $(DESTDIR)$(MANDIR)/man1/ubperf.1
	install -D -m 0644 docs/urma.7 $(DESTDIR)$(MANDIR)/man7/urma.7
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/ubxdp/urma
	install -m 0644 $(URMA_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf liburma.so.$(URMA_VER) $(DESTDIR)$(LIBDIR)/liburma.so.$(URMA_SOVER)
	ln -sf liburma.so.$(URMA_SOVER) $(DESTDIR)$(LIBDIR)/liburma.so
	install -m 0644 $(addprefix user/urma/include/,$(URMA_HDRS)) $(DESTDIR)$(INCLUDEDIR)/ubxdp/urma/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)/ubxdp/urma|' \
	    -e 's|@VERSION@|$(URMA_VER)|' dist/urma.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/urma.pc
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	for u in $(UNITS); do \
		sed 's|@BINDIR@|$(BINDIR)|g' dist/systemd/$$u > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/$$u || exit 1; \
	done
	install -D -m 0644 dist/sysctl.d/ubxdp.conf $(DESTDIR)$(SYSCTL_DIR)/ubxdp.conf
	install -D -m 0644 $(BUILD)/bash-completion/ubctl $(DESTDIR)$(BASH_COMPLETION_DIR)/ubctl
	for d in $(CONF_DIRS); do install -d -m 0755 $(DESTDIR)/etc/ubxdp/$$d || exit 1; done

# What install put there (the /etc/ubxdp configuration stays).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,ubctl ubcaqm ubperf urma_example $(notdir $(TOOLS)))
	rm -f $(DESTDIR)$(MANDIR)/man8/ubctl.8 $(DESTDIR)$(MANDIR)/man7/urma.7
	rm -f $(DESTDIR)$(MANDIR)/man8/ubpkt.8 $(DESTDIR)$(MANDIR)/man8/ubcaqm.8 $(DESTDIR)$(MANDIR)/man1/ubperf.1
	rm -f $(DESTDIR)$(LIBDIR)/liburma.so.$(URMA_VER) $(DESTDIR)$(LIBDIR)/liburma.so.$(URMA_SOVER)
	rm -f $(DESTDIR)$(LIBDIR)/liburma.so $(DESTDIR)$(LIBDIR)/pkgconfig/urma.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/ubxdp/urma/,$(URMA_HDRS))
	rmdir $(DESTDIR)$(INCLUDEDIR)/ubxdp/urma $(DESTDIR)$(INCLUDEDIR)/ubxdp 2>/dev/null || true
	rm -f $(addprefix $(DESTDIR)$(SYSTEMD_UNIT_DIR)/,$(UNITS))
	rm -f $(DESTDIR)$(SYSCTL_DIR)/ubxdp.conf $(DESTDIR)$(BASH_COMPLETION_DIR)/ubctl
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi

# The man pages of the tools: templates (docs/man/*.in) with the sections the
# tools generate from their option tables (scripts/mkman.sh). Committed;
# tests/cli fails when one differs from what this writes.
MAN_PAGES := docs/ubctl.8 docs/ubperf.1 docs/ubpkt.8 docs/ubcaqm.8
man: $(BUILD)/bin/ubctl $(BUILD)/bin/ubperf $(BUILD)/bin/ubpkt $(BUILD)/bin/ubcaqm
	@for p in $(MAN_PAGES); do \
		b=$$(basename $$p); scripts/mkman.sh $(BUILD)/bin/$${b%.*} docs/man/$$b.in >$$p.tmp && mv $$p.tmp $$p || exit 1; \
	done

WIRESHARK_PLUGIN_DIR ?= $(HOME)/.local/lib/wireshark/plugins
install-wireshark:
	install -D -m 0644 tools/wireshark/ub.lua $(WIRESHARK_PLUGIN_DIR)/ub.lua

clean:
	rm -rf $(BUILD)

.PHONY: all deps test demo bench fuzz fuzz-wps vmtest vmtest-selftest install uninstall install-wireshark clean man
.PHONY: version dist progs urma-asan FORCE
.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: fuzz-ub2e fuzz-transport fuzz-cc
