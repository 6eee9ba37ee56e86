#!/usr/bin/env bash
# Installs every Debian package Weft needs to build, test and benchmark. Idempotent.
set -euo pipefail
packages=(
  build-essential g++ cmake pkg-config git
  openmpi-bin libopenmpi-dev
  libhwloc-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev googletest
  clang-format clang
  libgloo-dev gnuplot-nox python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
$sudo apt-get update -qq
if ((${#missing[@]})); then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
