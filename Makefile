# kvbench — see README.md. `make run` is the main job, `make test` the tests.

GO      ?= go
BIN     := bin/kvbench
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build run test vet fuzz docs deps chart-check bench-serve bench-persist bench-alloc bench-largerss bench-loadgen bench-ordered bench-matrix bench-tests bench-cluster clean

all: build

# The version the binary reports (kvbench version, INFO server).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDFLAGS := $(if $(VERSION),-X github.com/kvbench/kvbench/internal/cli.version=$(VERSION)) \
	$(if $(COMMIT),-X github.com/kvbench/kvbench/internal/cli.commit=$(COMMIT))

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kvbench

# The main job.
run: build
	./$(BIN) run

# What the tests and the side-by-side benchmarks need, from Debian's
# packages: redis-server, redis-cli and redis-benchmark, chromium for
# the report's chart in a real browser, postgresql (initdb and
# postgres, which the history's tests start) for the history's second store,
# and prometheus (promtool and the server) for the metrics' tests; the
# package's service is stopped where a service manager started it.
deps:
	@missing=""; \
	command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || missing="redis-server redis-tools"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v promtool >/dev/null && command -v prometheus >/dev/null || missing="$$missing prometheus"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		case "$$missing" in *prometheus*) \
			if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then $(SUDO) systemctl disable --now prometheus 2>/dev/null || true; fi;; \
		esac; \
	fi

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi

# The tests: vet, gofmt, and every package under the race detector (but a
# statistical simulation of one goroutine, run apart without it), with
# the Redis tools, the browser, PostgreSQL, Prometheus and io_uring required rather
# than skipped, and no run recorded in the user's history. The server's
# tests run against each event loop: io_uring with the rest, and epoll
# for the kvstore package whole and kvbench serve's tests, beside them (its
# output is printed after theirs): the kvstore's tests are the longest, and
# one after the other the two passes took most of the time. After epoll,
# the kvstore's tests run once more on io_uring with a lone connection
# kept in the ring (uring-shared), which most tests' one connection would
# otherwise leave for the direct path. The timeouts
# are bounds on a hang, on a machine as loaded as two passes make it.
REQUIRE := KVBENCH_REQUIRE_REDIS=1 KVBENCH_REQUIRE_CHROMIUM=1 KVBENCH_REQUIRE_POSTGRES=1 KVBENCH_REQUIRE_IO_URING=1 KVBENCH_REQUIRE_PROMETHEUS=1 KVBENCH_HISTORY=off
test: deps vet
	@status=0; epoll=$$(mktemp); \
	( $(REQUIRE) KVBENCH_TEST_IO=epoll $(GO) test -race -timeout 20m ./kvstore/ && \
	  $(REQUIRE) KVBENCH_TEST_IO=epoll $(GO) test -race -timeout 20m -run '^TestServe' ./cmd/kvbench/ && \
	  $(REQUIRE) KVBENCH_TEST_IO=uring-shared $(GO) test -race -timeout 20m ./kvstore/ ) >$$epoll 2>&1 & pid=$$!; \
	$(REQUIRE) KVBENCH_TEST_IO=uring $(GO) test -race -timeout 20m ./... || status=1; \
	$(GO) test -timeout 20m -run '^TestPairedCoverage$$' ./pkg/stats/ || status=1; \
	wait $$pid || status=1; \
	echo "== the server's tests on epoll, and on io_uring with a lone connection in the ring (KVBENCH_TEST_IO=epoll, uring-shared)"; cat $$epoll; rm -f $$epoll; \
	exit $$status

# The power-loss tests alone: they mount FUSE file systems (root and
# /dev/fuse), which make test leaves out; here FUSE is required.
test-fuse: deps
	KVBENCH_TEST_FUSE=1 KVBENCH_REQUIRE_FUSE=1 KVBENCH_REQUIRE_REDIS=1 KVBENCH_HISTORY=off $(GO) test -race -count=1 ./pkg/lazyfs/
	KVBENCH_TEST_FUSE=1 KVBENCH_REQUIRE_FUSE=1 KVBENCH_REQUIRE_REDIS=1 KVBENCH_HISTORY=off $(GO) test -race -count=1 -run 'PowerLoss' ./pkg/runner/

# The fault table of docs/serve.md, measured on real "kvbench serve"
# processes (its full-disk and read-only rows mount tmpfs: root), into
# FAULTS (default /tmp/kvbench-faults.md).
.PHONY: fault-table
fault-table: deps
	KVBENCH_FAULT_TABLE=$(or $(FAULTS),/tmp/kvbench-faults.md) KVBENCH_HISTORY=off $(GO) test -count=1 -run '^TestServeFaultTable$$' -v -timeout 15m ./cmd/kvbench/

# The report's chart in a real browser alone: headless Chromium renders the
# SVG with the machine's fonts and with none, and the test requires the same
# pixels, not blank (make test runs it too).
chart-check: deps
	KVBENCH_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run 'TestChart' -v ./pkg/render ./pkg/report/output

# The command reference, docs/cli, from the commands themselves.
docs:
	$(GO) run ./cmd/gen-docs

# A short run of every fuzz target in the tree, FUZZTIME each (the seed
# corpora run in `make test`). The targets are listed by go test itself,
# so a new one cannot be missed. FUZZTIME is a count of inputs: with a
# duration, Go before 1.27 may fail a target with "context deadline
# exceeded" as the time runs out, having found nothing (golang/go#75804).
FUZZTIME ?= 200000x
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# kvbench serve against redis-server, same client (redis-benchmark), A B A B.
bench-serve: build deps
	bench/serve.sh

# Two kvbench binaries' servers, the same client (redis-benchmark), A B B A:
# A=old/kvbench B=new/kvbench, PAIRS (default 6); see bench/serveab.sh.
.PHONY: bench-serve-ab
bench-serve-ab: deps
	bench/serveab.sh

# kvbench bench against redis-benchmark, same redis-server, A B A B.
bench-loadgen: build deps
	bench/loadgen.sh

# kvbench bench --tls against redis-benchmark --tls, same TLS redis-server,
# and what TLS costs each against plaintext; SAMPLES per scenario (default 5).
.PHONY: bench-tls
bench-tls: build deps
	KVBENCH=bin/kvbench bench/tls.sh
# redis-benchmark's default tests, redis-benchmark -t X against kvbench
# bench --tests X, same redis-server, A B B A; SAMPLES per test (default 5).
bench-tests: build deps
	bench/rbtests.sh

# kvbench bench --replay of a 1,000,000-command MONITOR capture against
# redis-benchmark -t set,get sending the same, same redis-server, A B B A.
.PHONY: bench-replay
bench-replay: build deps
	bench/replay.sh

# The whole load space: value size × pipeline × connections, for the server
# (kvstore vs redis) and the generator (kvbench vs redis-benchmark).
# SAMPLES per cell (default 5), PERSIST=everysec; see bench/matrix.sh.
bench-matrix: build deps
	bench/matrix.sh

# The kvstore's two event loops (--io auto, and the other one) against
# redis-server over the whole load space: 32 B to 1 MB × pipeline 1, 16,
# 128 × 1 and 50 connections × GET and SET, a fresh server per sample,
# 5 samples, U-tests, peak RSS; lists the cells where the default loop
# misses a goal. About half an hour; bench-loops-short is a smoke check of a
# few minutes. See bench/loops.sh.
.PHONY: bench-loops bench-loops-short
bench-loops: build deps
	bench/loops.sh
bench-loops-short: build deps
	SAMPLES=1 SIZES="1024 262144" bench/loops.sh

# Two kvbench binaries' load generators end to end, A B B A: A=... B=...
# (each a kvbench binary), PAIRS per case (default 8); see bench/abbin.sh.
.PHONY: bench-ab
bench-ab: deps
	bench/abbin.sh

# Two builds' BenchmarkHotPath (the engine's work per request), A B B A:
# A=... B=... (each `go test -c ./pkg/loadgen`), PAIRS (default 8); see
# bench/abhot.sh.
.PHONY: bench-ab-hot
bench-ab-hot:
	bench/abhot.sh

# One binary with a flag against itself without, A B B A, one redis-server:
# FLAGS (default --resp3 --random-data), PAIRS (default 8); see bench/flags.sh.
.PHONY: bench-flags
bench-flags: build deps
	bench/flags.sh

# What each persistence policy costs, kvstore next to redis-server.
bench-persist: build deps
	bench/persist.sh

# What a snapshot or log rewrite costs while the server serves: Redis's
# BGSAVE and BGREWRITEAOF against the kvstore's, under load (run
# --persist-job). About 10 minutes.
.PHONY: bench-persist-job
bench-persist-job: build deps
	bench/persistjob.sh

# Whether the main job decides: the fixed rounds against the adaptive
# default (time, widest interval), A/A false alarms and coverage, a known
# difference found (RUNS of each; see bench/decide.py). About 40 minutes
# with RUNS=10 on a quiet 2-core machine.
RUNS ?= 10
.PHONY: bench-decide
bench-decide: build deps
	bench/decide.py --runs $(RUNS)

# The two allocators side by side: QPS, RSS, GC CPU share and pauses.
bench-alloc: build deps
	bench/alloc.sh

# Memory held for large values: RSS after 100,000 keys × 16 KB, kvstore and Redis.
bench-largerss: build deps
	bench/largerss.sh

# The ordered engine (RSET/RGET) against the kvstore's SET/GET and Redis's.
bench-ordered: build deps
	bench/ordered.sh

# Clusters: kvbench bench --cluster vs redis-benchmark --cluster, and
# kvstore-cluster vs redis-cluster vs one server of each; see bench/cluster.sh.
bench-cluster: build deps
	bench/cluster.sh

clean:
	rm -rf bin

# The dry run's estimate against the run it estimates (the recovery mode,
# a power loss, the profile rounds), with the ratio; see bench/estimate.sh.
.PHONY: bench-estimate
bench-estimate: build deps
	bench/estimate.sh

# The largest rate the open loop holds (send lag p99 < 100 us), per
# connections x pipeline, against redis-server and the kvstore, next to the
# closed loop's peak; see bench/openloop.sh (its "accuracy" mode: latency
# and send lag next to the closed loop's, by rate).
.PHONY: bench-openloop
bench-openloop: build deps
	bench/openloop.sh
