#!/usr/bin/env bash
# The crates harness: published parser crates (sqlparser, full_moon, kdl on
# winnow, serde_json with serde derive), as written on glibc and mimalloc
# and with every fn and impl annotated on BatchAlloc<System> and
# BatchAlloc<MiMalloc>; their own test suites as written and annotated;
# parse once and warm, time, peak RSS and minor faults. Everything it
# builds and writes goes under target/crates/.
#
#   benches/crates/run.sh              # full: the crates' tests, 5 rounds of 5 runs, callgrind
#   benches/crates/run.sh --quick      # 2 rounds of 3 runs, no tests, no callgrind
#   benches/crates/run.sh --tests-only
#   benches/crates/run.sh --report-only target/crates/results/latest/results.json
#
# See benches/crates/crates.py (or --help) for every option. Needs cargo,
# python3 (3.11+), hyperfine; valgrind for instruction counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 benches/crates/crates.py "$@"
