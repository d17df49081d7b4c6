# standby: one non-recursive Makefile.
#   make [V=1] [WERROR=1] [SAN=1]
#                                   build into build/ (build-san/ with SAN=1)
#   make check                      build and run every test, plain and under ASan+UBSan
#   make fuzz [FUZZ_SECONDS=30]     build the libFuzzer targets (clang) into build-fuzz/, run each
#   make bench                      the default benchmark comparison (README's main job)
#   make install [PREFIX=/usr/local] [DESTDIR=]   make uninstall (same variables)
#   make install-bench              standby-bench, standby-workload and standby-bench(1)
#   make man | format | lint | clean

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/libexec/standby
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
DOCDIR ?= $(PREFIX)/share/doc/standby
RULESLIBDIR ?= $(PREFIX)/lib/standby/rules.d
CONFDLIBDIR ?= $(PREFIX)/lib/standby/standby.conf.d
# Where systemd, systemd-tmpfiles and the system bus look, whatever PREFIX is:
# under /usr/local they would never be read.
SYSTEMDUNITDIR ?= $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
TMPFILESDIR ?= $(shell $(PKG_CONFIG) --variable=tmpfilesdir systemd 2>/dev/null || echo /usr/lib/tmpfiles.d)
DBUSPOLICYDIR ?= /usr/share/dbus-1/system.d
POLKITACTIONDIR ?= /usr/share/polkit-1/actions
# journalctl reads catalogs there only; Debian's systemd rebuilds its
# database by a dpkg trigger on it, `make install` by journalctl.
CATALOGDIR ?= $(shell $(PKG_CONFIG) --variable=catalogdir systemd 2>/dev/null || echo /usr/lib/systemd/catalog)

CC ?= cc
FUZZ_CC ?= clang
PKG_CONFIG ?= pkg-config
SCDOC ?= scdoc

ifeq ($(FUZZ),1)
# libFuzzer with ASan+UBSan (clang; on Debian: clang and libclang-rt-14-dev).
B ?= build-fuzz
CC := $(FUZZ_CC)
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPTFLAGS := -O1 -g
else ifeq ($(SAN),1)
B ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPTFLAGS := -O1 -g
else
B ?= build
SANFLAGS :=
OPTFLAGS := -O2 -g -D_FORTIFY_SOURCE=2
endif

WARNFLAGS := -Wall -Wextra -Wformat=2 -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wvla \
	-Wno-unused-parameter
ifeq ($(WERROR),1)
WARNFLAGS += -Werror
endif

# Linked dynamically, as Debian links them. The listener takes libnl-3's
# socket and message parsing only: libnl-route-3 (the bench's, for making
# links) would be the largest part of the resident listener's pages.
DEPS := libsystemd libnl-route-3.0 libevdev
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DEPS))
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(DEPS))
LISTENER_LIBS := $(shell $(PKG_CONFIG) --libs libsystemd libnl-3.0 libevdev)
MANAGER_LIBS := -ldl
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check)

ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(OPTFLAGS) $(WARNFLAGS) -fstack-protector-strong \
	-DSTANDBY_SYSCONFDIR='"$(SYSCONFDIR)"' -DSTANDBY_LIBEXECDIR='"$(LIBEXECDIR)"' -DSTANDBY_RULES_LIBDIR='"$(RULESLIBDIR)"' \
	-DSTANDBY_CONFD_LIBDIR='"$(CONFDLIBDIR)"' -DSTANDBY_SBINDIR='"$(SBINDIR)"' \
	-Icommon -Ifreezer $(SANFLAGS) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP
ALL_LDFLAGS := $(SANFLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q :=
else
Q := @
endif

COMMON_SRC := $(wildcard common/*.c)
FREEZER_SRC := $(filter-out freezer/standby-manager.c,$(wildcard freezer/*.c))
MANAGER_SRC := freezer/standby-manager.c
LISTENER_SRC := $(filter-out listener/standby-listener.c,$(wildcard listener/*.c))
BENCH_SRC := bench/standby-bench.c bench/bench-workloads.c bench/bench-stats.c bench/bench-listener.c bench/bench-hold.c bench/bench-selfcheck.c bench/bench-events.c \
	bench/bench-bare-thawer.c bench/bench-loaded.c bench/bench-cgroup-storm.c bench/bench-period.c bench/bench-period-stats.c bench/bench-slack-kinds.c
WORKLOAD_SRC := bench/standby-workload.c
TEST_SRC := $(wildcard tests/*.c)
FUZZ_SRC := $(wildcard tests/fuzz/*.c)
HELPER_SRC := $(wildcard tests/helpers/*.c)

LIB := $(B)/libstandby.a
FREEZER_LIB := $(B)/libfreezer.a
LISTENER_LIB := $(B)/liblistener.a
MANAGER := $(B)/standby-manager
LISTENER := $(B)/standby-listener
BENCH := $(B)/standby-bench
WORKLOAD := $(B)/standby-workload
TESTS := $(B)/test-standby
HELPERS := $(patsubst tests/helpers/%.c,$(B)/helpers/%,$(HELPER_SRC))
FUZZERS := $(patsubst tests/fuzz/%.c,$(B)/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 30
MAN_SRC := $(wildcard docs/man/*.scd)
MANPAGES := $(patsubst docs/man/%.scd,$(B)/man/%,$(MAN_SRC))

PROGRAMS := $(MANAGER) $(LISTENER) $(BENCH) $(WORKLOAD)

obj = $(patsubst %.c,$(B)/%.o,$(1))

.PHONY: all check check-plain check-san check-system check-vm test test-binaries fuzz fuzz-binaries bench install install-bench uninstall man format lint clean
all: $(PROGRAMS) $(TESTS) $(HELPERS) man

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(call obj,$(COMMON_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The freezing engine (Manager, freeze, slack, selection): the manager's verbs
# and the listener's thaws are the same code.
$(FREEZER_LIB): $(call obj,$(FREEZER_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The listener's sources and rule parser: the daemon, and the tests and the
# fuzz target of its rule files (each kind's keys are its source's).
$(LISTENER_LIB): $(call obj,$(LISTENER_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(MANAGER): $(call obj,$(MANAGER_SRC)) $(FREEZER_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(MANAGER_LIBS) -pthread

$(LISTENER): $(call obj,listener/standby-listener.c) $(LISTENER_LIB) $(FREEZER_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LISTENER_LIBS) -pthread

# The checked bare thawer walks D-Bus headers as the listener does.
$(BENCH): $(call obj,$(BENCH_SRC) listener/dbus-wire.c) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(WORKLOAD): $(call obj,$(WORKLOAD_SRC)) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lrt -pthread

$(B)/helpers/%: $(B)/tests/helpers/%.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) -pthread

$(B)/tests/%.o: ALL_CFLAGS += $(CHECK_CFLAGS)
$(TESTS): $(call obj,$(TEST_SRC)) $(call obj,bench/bench-stats.c bench/bench-period-stats.c bench/bench-bare-thawer.c \
	bench/bench-slack-kinds.c) $(LISTENER_LIB) $(FREEZER_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(CHECK_LIBS) -lm -pthread

# One program per parser: the rule and config files, the journal, the D-Bus
# wire walk (libFuzzer's main; every library object built with its coverage).
$(B)/fuzz-%: $(B)/tests/fuzz/fuzz-%.o $(LISTENER_LIB) $(FREEZER_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -pthread

fuzz-binaries: $(FUZZERS)
.SECONDARY: $(call obj,$(FUZZ_SRC))

$(B)/man/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  SCDOC   $@")
	$(Q)$(SCDOC) < $< > $@ || { rm -f $@; exit 1; }

man: $(MANPAGES)

# The tests run against the binaries of the same build: tests/run-tests.sh
# sets up what they need and runs the Check runner.
test-binaries: $(PROGRAMS) $(TESTS) $(HELPERS)

check-plain: test-binaries
	tests/run-tests.sh $(B)

check-san:
	$(MAKE) SAN=1 test-binaries
	tests/run-tests.sh build-san

# One after the other: the suites share the machine's cgroup tree and CPUs.
check:
	$(MAKE) check-plain
	$(MAKE) check-san
test: check

# Each fuzz target for FUZZ_SECONDS, from the seeds in tests/fuzz/corpus/NAME
# (read only) and what earlier runs found (build-fuzz/corpus/NAME); a crash
# leaves its input in build-fuzz/crash/ and fails the run.
fuzz:
	$(MAKE) FUZZ=1 fuzz-binaries
	@for f in $(notdir $(basename $(FUZZ_SRC))); do n=$${f#fuzz-}; \
		mkdir -p build-fuzz/corpus/$$n build-fuzz/crash; \
		echo "  FUZZ    $$n ($(FUZZ_SECONDS) s)"; \
		build-fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
			-artifact_prefix=build-fuzz/crash/$$n- build-fuzz/corpus/$$n tests/fuzz/corpus/$$n \
			> build-fuzz/$$n.log 2>&1 || { tail -n 60 build-fuzz/$$n.log; exit 1; }; \
		grep -E '^stat::(number_of_executed_units|new_units_added)' build-fuzz/$$n.log | tr '\n' ' '; echo; \
	done

# A booted Debian with systemd as PID 1 under systemd-nspawn, standby's .deb
# (scripts/build-deb.sh) installed into it, upgraded, removed and purged
# (root; debootstrap, systemd-container, debhelper; the rootfs is cached in
# /var/tmp/standby-system-test).
check-system: $(PROGRAMS) $(HELPERS) man
	tests/system/nspawn-test.sh

# What needs a kernel of its own (uinput devices that logind and the listener
# read), under qemu, KVM where /dev/kvm is (root; the image is cached in
# /var/tmp/standby-system-test/vm; STANDBY_VM_SCENARIOS="NAME..." for some).
check-vm: test-binaries man
	tests/system/vm-test.sh

bench: $(PROGRAMS)
	$(BENCH) --manager $(MANAGER) --workload $(WORKLOAD) $(BENCH_ARGS)

# The harness runs from the build tree (make bench); it is not installed.
install: $(MANAGER) $(LISTENER) man
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(SYSCONFDIR)/standby $(DESTDIR)$(DOCDIR)
	install -m 0755 $(MANAGER) $(LISTENER) $(DESTDIR)$(SBINDIR)/
	for m in $(filter-out %standby-bench.1,$(MANPAGES)); do s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	test -e $(DESTDIR)$(SYSCONFDIR)/standby/standby.conf || \
		install -m 0644 units/standby.conf $(DESTDIR)$(SYSCONFDIR)/standby/standby.conf
	install -m 0644 README.md docs/design.md $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(DBUSPOLICYDIR) $(DESTDIR)$(RULESLIBDIR) \
		$(DESTDIR)$(SYSCONFDIR)/standby/rules.d $(DESTDIR)$(POLKITACTIONDIR)
	for u in $(notdir $(basename $(wildcard units/*.service.in))); do \
		sed 's|@SBINDIR@|$(SBINDIR)|g' units/$$u.in > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; done
	install -m 0644 units/standby.target $(DESTDIR)$(SYSTEMDUNITDIR)/
	install -m 0644 units/standby.tmpfiles $(DESTDIR)$(TMPFILESDIR)/standby.conf
	install -m 0644 units/org.standby.Listener1.conf $(DESTDIR)$(DBUSPOLICYDIR)/
	install -m 0644 polkit/org.standby.policy $(DESTDIR)$(POLKITACTIONDIR)/
	install -d $(DESTDIR)$(CATALOGDIR)
	install -m 0644 units/standby.catalog $(DESTDIR)$(CATALOGDIR)/
	install -m 0644 units/rules.d/*.rule $(DESTDIR)$(RULESLIBDIR)/
	@# On the running system (no DESTDIR): create /run/standby now and tell
	@# systemd about the units, so that no reboot is needed. The system bus
	@# notices the new policy file by itself (it watches its directories).
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemd-tmpfiles --create $(TMPFILESDIR)/standby.conf && systemctl daemon-reload; fi
	if [ -z "$(DESTDIR)" ]; then journalctl --update-catalog || true; fi

# The harness and its workloads with their man page, for a machine that
# benchmarks an installed standby (not part of `install`: a distribution
# ships the daemons, not the harness).
install-bench: $(BENCH) $(WORKLOAD) man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(BENCH) $(WORKLOAD) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(B)/man/standby-bench.1 $(DESTDIR)$(MANDIR)/man1/

# Removes what install put, except /etc/standby (the administrator's
# configuration and rules, which a package manager also keeps) and
# /run/standby (removed at the next boot; `standby-manager exit` first).
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/standby-manager $(DESTDIR)$(SBINDIR)/standby-listener
	for m in $(notdir $(filter-out %standby-bench.1,$(MANPAGES))); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m; done
	rm -f $(DESTDIR)$(DOCDIR)/README.md $(DESTDIR)$(DOCDIR)/design.md
	-rmdir $(DESTDIR)$(DOCDIR)
	for u in $(notdir $(basename $(wildcard units/*.service.in))) standby.target; do rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; done
	rm -f $(DESTDIR)$(TMPFILESDIR)/standby.conf $(DESTDIR)$(DBUSPOLICYDIR)/org.standby.Listener1.conf
	rm -f $(DESTDIR)$(POLKITACTIONDIR)/org.standby.policy
	rm -f $(DESTDIR)$(CATALOGDIR)/standby.catalog
	for r in units/rules.d/*.rule; do rm -f $(DESTDIR)$(RULESLIBDIR)/$${r##*/}; done
	-rmdir $(DESTDIR)$(RULESLIBDIR) $(DESTDIR)$(PREFIX)/lib/standby
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi

# The house style is .clang-format's; lines the code keeps past its
# 120 columns (long format strings) are rewrapped by it.
format:
	clang-format -i common/*.[ch] freezer/*.[ch] listener/*.c bench/*.[ch] tests/*.[ch] tests/helpers/*.c

# cppcheck knows neither __attribute__((cleanup)) (every _cleanup_ variable
# reads as a leak, so its memory-leak check is off, and its resource-leak
# reports are off in the two files where they are all _cleanup_ ones;
# LeakSanitizer checks leaks in `make check`) nor that a NULL sentinel is a
# pointer on glibc; journal.c's unescape writes before it reads, which it
# does not follow either.
lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability -Icommon \
		--suppress=missingIncludeSystem --suppress=memleak --suppress=varFuncNullUB \
		--suppress=resourceLeak:bench/bench-period.c --suppress=leakNoVarFunctionCall:tests/test-listener-inhibit.c \
		--suppress=uninitdata:common/journal.c common freezer listener bench tests

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(B) -name '*.d' 2>/dev/null)
