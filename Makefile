# The two commands of the README: `make demo` and `make check`. Everything else is meson/ninja.
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all deps build demo check bench fuzz clean
all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) >/dev/null

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)/cordon

# The whole suite: unit, integration (as root and as an unprivileged user), the same again under
# ASan+UBSan with leak detection, and bounded fuzz runs.
check: deps
	@tests/run-all.sh

bench: build
	@bench/run-all.sh $(BUILD)/cordon

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
