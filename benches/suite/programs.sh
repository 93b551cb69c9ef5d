#!/usr/bin/env bash
# Measures the real-programs table and writes docs/programs.md (and its
# results, docs/programs.json).
#
#   benches/suite/programs.sh            # full: 5 rounds of 3 runs per process, callgrind (about 10 minutes on 2 cores: 2 of rounds, 7 of callgrind, on a quiet machine; plus the build)
#   benches/suite/programs.sh --quick    # 2 rounds of 2 runs, no callgrind (about 1 minute, plus the build)
#   benches/suite/programs.sh --programs expr,stmt --allocators system,batch_system --quick
#   benches/suite/programs.sh --report-only docs/programs.json   # rewrite the page
#
# Needs cargo and python3; valgrind for instruction counts (skipped with a
# notice if missing). See benches/suite/programs.py for the options.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 benches/suite/programs.py "$@"
