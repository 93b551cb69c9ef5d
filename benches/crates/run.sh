#!/usr/bin/env bash
# The crates harness: published parser crates (sqlparser, full_moon, kdl on
# winnow, serde_json with serde derive, syn over real Rust sources), as
# written on glibc and mimalloc, as written in one scope() and with every fn
# and impl annotated on BatchAlloc<System> and BatchAlloc<MiMalloc>, and on
# the limit (a warm arena: bump, no free, reset after each drop); parse once
# and warm, time, peak RSS, minor faults and instructions. And the test
# suites of eleven published crates (suites.py), as written and annotated,
# in debug and release, compared test by test. Everything it builds and
# writes goes under target/crates/.
#
#   benches/crates/run.sh                          # full: the crates' tests, 5 rounds of 5 runs, callgrind
#   benches/crates/run.sh --rounds 9 --skip-tests  # what docs/crates.md was made from
#   benches/crates/run.sh --quick                  # 2 rounds of 3 runs, no tests, no callgrind
#   benches/crates/run.sh --tests-only                 # the test suites only: docs/crate-suites.md with --publish
#   benches/crates/run.sh --tests-only --crates kdl --profiles debug --facade OTHER-BRANCH-OR-DIR
#   benches/crates/run.sh --report-only target/crates/results/latest/results.json
#   benches/crates/run.sh --report-only docs/crates.json     # rewrites docs/crates.md
#   python3 benches/crates/report.py RESULTS --publish   # docs/crates.md, docs/crates.json, the README's table
#
# Durations on the project's 2-core machine, shared with other builds:
# building from a cold target directory about 7 min; --quick about 5 min
# with the builds done; --rounds 9 --skip-tests about 45 min with the
# builds done (3 min a round, callgrind 10 min); --tests-only (part of a
# plain full run) about 77 min from a cold target directory. See benches/crates/crates.py
# (or --help) for every option. Needs cargo, python3 (3.11+), hyperfine; valgrind for instruction counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 benches/crates/crates.py "$@"
