// A kernel's arguments and group size as state of the kernel object (Level Zero's model):
// the rules of set_argument, set_group_size and suggest_group_size coded once for the
// backends that hold that state themselves, and the snapshot each launch takes of it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/module.hpp"
#include "hal/types.hpp"

namespace zehal::hal {

// The arguments and group size one launch runs with, copied from its kernel when the
// launch is appended (later set_argument calls do not reach it).
struct LaunchSnapshot {
    std::array<uint32_t, 3> group_size{1, 1, 1};
    std::array<uint32_t, 3> global_offset{0, 0, 0};  // get_global_offset() of the launch
    std::vector<uint64_t> storage;                   // every argument's bytes, each starting on 8 bytes
    std::vector<size_t> offsets;                     // argument i's first byte in storage
    std::vector<size_t> local_sizes;                 // argument i's __local bytes (0 for the others)
    std::vector<const void*> values;                 // argument i's bytes (into storage), as launches pass them

    // The address argument `i` holds when it is a global or constant pointer.
    const void* pointer(size_t i) const noexcept;
};

// The largest group (in total and per dimension) and __local bytes a device runs.
struct KernelLimits {
    uint32_t max_group_size = 0;
    std::array<uint32_t, 3> max_group_dims{};
    uint32_t max_local_bytes = 0;

    // The limits `p` exposes.
    static KernelLimits of(const DeviceProperties& p) noexcept {
        return {p.max_group_size, p.max_group_dims, p.max_local_bytes};
    }
};

// INVALID_GROUP_SIZE_DIMENSION for a zero group count or one over the device's
// max_group_count; SUCCESS otherwise. The rule of Queue::append_launch.
ze_result_t check_group_count(const GroupCount& groups, const DeviceProperties& device) noexcept;

// The properties of a kernel as the compiler read it from SPIR-V (compiler::KernelInfo: its
// name, argument kinds, which are KernelArgKind's values, and sizes, required group size,
// private and static __local bytes, source attributes). A template, because the compiler is a peer of the HAL
// core, which does not include it; the backends that build SPIR-V instantiate it. A __local
// argument's size is 0 (each launch gives it); max_group_size is left 0 (KernelState sets
// the device's).
template <typename CompiledKernel>
KernelProperties properties_of_compiled(const CompiledKernel& info) {
    KernelProperties p;
    p.name = info.name;
    for (const auto& a : info.args) {
        const auto kind = static_cast<KernelArgKind>(a.kind);
        p.args.push_back({kind, kind == KernelArgKind::local ? 0 : static_cast<uint32_t>(a.size)});
    }
    p.required_group_size = info.required_group_size;
    p.private_bytes = info.private_bytes;
    p.local_bytes = info.local_bytes;
    p.source_attributes = info.attributes;
    return p;
}

// A Kernel whose arguments, group size and global offset are checked and kept here; a backend adds how it
// launches. Thread-safe.
class KernelState : public Kernel {
public:
    // A kernel of signature `props` (its max_group_size lowered to the device's when larger,
    // or set to it when 0, and to the required group size's product where there is one) on a
    // device of `limits`.
    KernelState(KernelProperties props, const KernelLimits& limits);

    const KernelProperties& properties() const override { return props_; }
    ze_result_t set_argument(uint32_t index, size_t size, const void* value) override;
    ze_result_t set_group_size(uint32_t x, uint32_t y, uint32_t z) override;
    std::array<uint32_t, 3> group_size() const override;
    ze_result_t set_global_offset(uint32_t x, uint32_t y, uint32_t z) override;
    std::array<uint32_t, 3> global_offset() const override;
    ze_result_t suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const override;

    // The state a launch runs with: INVALID_ARGUMENT while an argument is unset, or when the
    // __local memory of the kernel and its arguments together exceeds the device's.
    ze_result_t snapshot(LaunchSnapshot* out) const;

private:
    KernelProperties props_;
    const KernelLimits limits_;

    mutable std::mutex mu_;  // the fields below
    std::array<uint32_t, 3> group_size_{1, 1, 1};
    std::array<uint32_t, 3> global_offset_{0, 0, 0};
    std::vector<uint64_t> storage_;    // as LaunchSnapshot::storage
    std::vector<size_t> offsets_;      // fixed by the signature
    std::vector<size_t> local_sizes_;  // as LaunchSnapshot::local_sizes
    std::vector<bool> set_;            // argument i was set
};

}  // namespace zehal::hal
