# Entry points. Each target first runs the idempotent set-up (apt packages as
# root, mbedTLS source from Debian's source package), then builds with meson.
BUILD ?= build
MESON_OPTS ?=

.PHONY: all setup build demo check bench clean

all: build

setup:
	@scripts/setup.sh

build: setup
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD) $(MESON_OPTS)
	@ninja -C $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)

check: build
	@meson test -C $(BUILD) --print-errorlogs --num-processes 2

bench: build
	@scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD)
