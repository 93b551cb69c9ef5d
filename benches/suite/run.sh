#!/usr/bin/env bash
# Runs the comparison suite and writes docs/benchmarks.md and docs/img/*.png.
#
#   benches/suite/run.sh            # everything: about 40 minutes on 2 cores, plus the build
#   benches/suite/run.sh --quick    # a subset: about 8 minutes
#   benches/suite/run.sh --report-only docs/benchmarks.json   # rewrite the report
#
# Needs cargo, python3 and valgrind (instruction counts; skipped if
# missing). Installs matplotlib (the charts) into target/suite/venv if
# python3 lacks it. Each round is a criterion baseline under
# target/suite/latest for critcmp. See benches/suite/suite.py for the options.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 benches/suite/suite.py "$@"
