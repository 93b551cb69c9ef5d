#!/usr/bin/env bash
# Cargo's runner for x86_64-pc-windows-gnu: runs a test or example binary
# under Wine, with the stand-in bcryptprimitives.dll next to it (see
# bcryptprimitives.c). Wine's prefix lives in target/, made on first use.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exe="$1"
dll="$(dirname "$exe")/bcryptprimitives.dll"
if [ ! -e "$dll" ] || [ "$here/bcryptprimitives.c" -nt "$dll" ]; then
    x86_64-w64-mingw32-gcc -O2 -shared -o "$dll.tmp" "$here/bcryptprimitives.c" -ladvapi32
    mv "$dll.tmp" "$dll"
fi
export WINEPREFIX="${WINEPREFIX:-$here/../../target/wine-prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
# No Mono or Gecko: nothing here needs them, and Wine would look for them.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
exec /usr/lib/wine/wine64 "$@"
