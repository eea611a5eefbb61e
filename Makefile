# kvsearch: `make setup` installs what the build needs, `make test` builds and runs every test,
# `make demo` runs the embedded demo, `make format-check` checks the formatting of the C++ lines
# the last commit changed (FORMAT_BASE to compare with another). Variables: BUILD_DIR, BUILD_TYPE,
# JOBS.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: all setup configure build test demo format-check clean

all: build

setup:
	@bash tools/bootstrap.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The suite's wall time is printed at its end (the goal: at most 12 minutes on 2 idle cores).
test: build
	@start=$$(date +%s); cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS); \
	rc=$$?; secs=$$(( $$(date +%s) - start )); \
	echo "make test: the suite took $$((secs / 60)) min $$((secs % 60)) s of wall time ($$secs s)"; \
	exit $$rc

demo: build
	@bash tools/demo.sh ./$(BUILD_DIR)/kvsearch results/demo

FORMAT_BASE ?= HEAD~1
format-check: setup
	@bash tools/check_format.sh $(FORMAT_BASE)

clean:
	rm -rf $(BUILD_DIR)
