# Entry points. Each target first runs the idempotent set-up (apt packages as
# root, mbedTLS source from Debian's source package), then builds with meson.
BUILD ?= build
MESON_OPTS ?=
# sotls's own builds: every part, warnings are errors, and the tools install
# (the install test checks them); a consumer's subproject build gets none of
# these by default.
DEV_OPTS = -Dwerror=true -Dtests=enabled -Dexamples=enabled -Dbench=enabled \
	-Dinstall_examples=true

.PHONY: all setup build demo check bench clean fuzz load

all: build

setup:
	@scripts/setup.sh

build: setup
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) $(DEV_OPTS) $(MESON_OPTS)
	@ninja -C $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)

check: build
	@meson test -C $(BUILD) --print-errorlogs --num-processes 2
	@scripts/check-sanitizers.sh $(BUILD) $(BUILD)-asan
	@scripts/fuzz.sh --smoke $(BUILD)-fuzz
	@scripts/check-aarch64.sh $(BUILD)-aarch64

# libFuzzer targets, FUZZ_SECONDS each (clang build in $(BUILD)-fuzz).
FUZZ_SECONDS ?= 300
fuzz: setup
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(BUILD)-fuzz

# The full load run: LOAD_CONNS connections for LOAD_SECONDS.
LOAD_CONNS ?= 1000
LOAD_SECONDS ?= 60
load: build
	@scripts/load.sh $(BUILD) $(LOAD_CONNS) $(LOAD_SECONDS)

bench: build
	@scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
