#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds consumer.c against it with pkg-config and with
# find_package(weft), and runs it with mpirun -np 3 and 4: default plugins, WEFT_PLUGINS=tcp, and each
# algorithm forced. The installed weft-info must find the installed shm and tcp plugins.
# Usage: run_install_test.sh <build dir> <mpirun command...>
set -euo pipefail
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d /tmp/weft-install-test.XXXXXX)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$(echo "$prefix"/lib*/pkgconfig)
# CFLAGS: set by a sanitized tree (WEFT_SANITIZE), whose libweft.so needs its consumers built with the same
# runtime; CMake reads it too, for the find_package consumer.
# shellcheck disable=SC2086
cc ${CFLAGS:-} -std=c99 -Wall -Wextra -Werror -pedantic "$here/consumer.c" $(pkg-config --cflags --libs weft) -lm \
  -o "$prefix/consumer"
cmake -S "$here/cmake_consumer" -B "$prefix/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cmake-consumer" >/dev/null
test -x "$prefix/bin/commperf"

# weft-info from the installed tree finds the installed plugins, next to the installed libweft.so (not the
# build tree's, and without WEFT_PLUGIN_PATH).
test -x "$prefix/bin/weft-info"
env -u WEFT_PLUGIN_PATH -u WEFT_PLUGINS "$prefix/bin/weft-info" --json >"$prefix/weft-info.json"
python3 - "$prefix" "$prefix/weft-info.json" <<'PY'
import json, os, sys
prefix, path = os.path.realpath(sys.argv[1]), sys.argv[2]
info = json.load(open(path))
for name in ("shm", "tcp"):
    p = next((p for p in info["plugins"] if p["name"] == name and not p["shadowed_by"]), None)
    if p is None or not p["loaded"]:
        sys.exit(f"installed weft-info: plugin {name} not loaded: {p}")
    if not os.path.realpath(p["file"]).startswith(prefix + "/"):
        sys.exit(f"installed weft-info loaded {name} from {p['file']}, outside {prefix}")
if not os.path.realpath(info["library"]).startswith(prefix + "/"):
    sys.exit(f"installed weft-info uses {info['library']}, not the installed libweft.so")
print("installed weft-info: shm and tcp loaded from", prefix)
PY

settings=(
  ""
  "WEFT_PLUGINS=tcp"
  "WEFT_ALGO=allreduce:ring;reducescatter:ring;allgather:ring"
  "WEFT_ALGO=allreduce:recursive_doubling;allgather:bruck"
  "WEFT_ALGO=allreduce:rabenseifner;reducescatter:rabenseifner"
)
for np in 3 4; do
  for setting in "${settings[@]}"; do
    port=$(python3 "$here/../free_port.py")
    env_args=(-x "WEFT_ROOT=127.0.0.1:$port")
    [[ -n $setting ]] && env_args+=(-x "$setting")
    echo "np $np ${setting:-defaults}"
    "$@" -np "$np" "${env_args[@]}" "$prefix/consumer"
  done
done
port=$(python3 "$here/../free_port.py")
"$@" -np 3 -x "WEFT_ROOT=127.0.0.1:$port" "$prefix/cmake-consumer/consumer_cmake"
