# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build and test entry points for sroce.
#
#   make                 build sroce.ko against the running kernel's headers
#                        (or Debian's 6.1 headers when the running kernel has none)
#   make KDIR=DIR        build against any other kernel build directory
#   make deps            install what the targets below need (apt-get, only what is missing)
#   make kmods           build for every supported kernel into build/KVER/
#   make lint            W=1 and sparse builds for every kernel, checkpatch --strict
#   make kunit           KUnit suites in a VM on the debug kernel
#   make check           everything: builds, lint, KUnit, VM scenarios; ends "N passed, N failed"
#   make check-full      what make check leaves out for time: the other scenarios on the debug kernel,
#                        some on the other stock kernel, a million fuzzed packets, the soak
#   make demo            two VMs running ibv_rc_pingpong over sroce
#   make bench           sroce against rdma_rxe and TCP on the two-VM link
#   make install         install sroce.ko for the kernel in KDIR and run depmod
#   make deb             the sroce-dkms Debian package, in out/deb/

SROCE_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
FALLBACK_KDIR = $(word 3,$(shell $(SROCE_ROOT)/scripts/kernels.sh 2>/dev/null | head -n1))
KDIR ?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(FALLBACK_KDIR))

.PHONY: all modules clean deps kmods lint checkpatch sparse debug-kernel kunit \
	check check-full scenarios demo bench install tools deb

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no kernel headers found: run 'make deps' or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(SROCE_ROOT) modules

clean:
	$(MAKE) -C $(KDIR) M=$(SROCE_ROOT) clean 2>/dev/null || true
	rm -rf $(SROCE_ROOT)/build $(SROCE_ROOT)/out
	[ ! -f tools/Makefile ] || $(MAKE) -C tools clean

deps:
	@$(SROCE_ROOT)/scripts/deps.sh

kmods: deps
	@$(SROCE_ROOT)/scripts/build-kernels.sh

lint: deps
	@$(SROCE_ROOT)/scripts/lint.sh

debug-kernel: deps
	@$(SROCE_ROOT)/tests/kernel/debug-kernel.sh

tools:
	$(MAKE) -C tools

kunit: deps
	@$(SROCE_ROOT)/tests/kunit/run.sh

check: deps
	@$(SROCE_ROOT)/tests/check.sh

check-full: deps
	@$(SROCE_ROOT)/tests/check-full.sh

demo: deps
	@$(SROCE_ROOT)/tests/demo.sh

bench: deps
	@$(SROCE_ROOT)/tests/bench.sh

deb: deps
	@$(SROCE_ROOT)/scripts/make-deb.sh

install: modules
	$(MAKE) -C $(KDIR) M=$(SROCE_ROOT) modules_install
	depmod -a $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
