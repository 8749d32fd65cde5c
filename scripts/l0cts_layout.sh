#!/usr/bin/env bash
# Lays out a level-zero-tests build tree as the suite's install does, so that the tests
# that start helper programs or load another binary's kernels find them when run from the
# build tree (docs/ze_driver.md, "Conformance"): each binary looks for its helpers in a
# folder of its working directory (device/, memory/, ipc/), and test_device's timestamp
# tests load test_module's module_add.spv. Copies, not links, so that the layout survives
# a transfer to another machine that drops links. Idempotent.
# usage: scripts/l0cts_layout.sh [conformance_tests/core folder, default
#        ${L0CTS:-/tmp/l0cts}/build/cts/conformance_tests/core]
set -euo pipefail
core=${1:-${L0CTS:-/tmp/l0cts}/build/cts/conformance_tests/core}
[ -d "$core" ] || { echo "no such folder: $core" >&2; exit 1; }

# place <binary folder> <helper folder name> <helper>...: copies each helper that exists.
place() {
  local dir=$core/$1 folder=$2
  shift 2
  [ -d "$dir" ] || return 0
  mkdir -p "$dir/$folder"
  for helper in "$@"; do
    if [ -f "$dir/$helper" ]; then
      rm -f "$dir/$folder/$helper"
      cp "$dir/$helper" "$dir/$folder/$helper"
    fi
  done
}

place test_device device test_affinity_helper test_device_hierarchy_helper test_pci_device_order_helper
place test_memory memory test_import_helper
place test_ipc ipc test_ipc_event_helper test_ipc_memory_helper test_ipc_put_handle_helper
place test_fabric fabric test_fabric_helper
place test_multiprocess process test_process_helper
if [ -f "$core/test_module/module_add.spv" ] && [ -d "$core/test_device" ]; then
  rm -f "$core/test_device/module_add.spv"
  cp "$core/test_module/module_add.spv" "$core/test_device/module_add.spv"
fi
echo "laid out: $core"
