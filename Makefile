# The two set-up commands of the README:
#   make demo   installs the Debian packages, builds everything, converts the bundled
#               4-rank trace and predicts its step next to the recorded one
#   make test   installs, builds and runs the test suite (what CI runs)
BUILD ?= build
JOBS ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: deps build demo test gpu-test bench format clean

deps:
	bash .ci/install-deps

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@mkdir -p $(BUILD)/demo
	./$(BUILD)/converter/et-convert 'examples/data/ddp_mlp_et_r%d.json.gz' \
	  '$(BUILD)/demo/ddp_mlp.%d.et' --ranks 4 \
	  --kineto 'examples/data/ddp_mlp_trace_r%d.json.gz'
	@# The bundled trace has no step measured without a profiler, so the demo
	@# predicts the run as recorded and compares it with its profiled steps.
	./$(BUILD)/simulator/et-sim '$(BUILD)/demo/ddp_mlp.%d.et' --ranks 4 --top 8 \
	  --host-time recorded

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE 'gpu|bias' $(CTEST_ARGS)

gpu-test: build
	ctest --test-dir $(BUILD) --output-on-failure -L gpu

bench: build
	bash tests/bench/run_benchmarks.sh $(BUILD)

format:
	git ls-files '*.cc' '*.h' '*.cu' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
