// Kernels (SEMANTICS §12): created from a module by name; their arguments, group size and
// attributes. The checks of arguments and group sizes are the HAL kernel's.
#include <array>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "chain.hpp"
#include "dispatch.hpp"
#include "kernel_object.hpp"
#include "spec_ext.h"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

constexpr uint32_t kKernelFlags = ZE_KERNEL_FLAG_FORCE_RESIDENCY | ZE_KERNEL_FLAG_EXPLICIT_RESIDENCY;
constexpr uint32_t kIndirectFlags = ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST | ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                                    ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED;
constexpr uint32_t kCacheFlags = ZE_CACHE_CONFIG_FLAG_LARGE_SLM | ZE_CACHE_CONFIG_FLAG_LARGE_DATA;

// Residency flags are hints: every allocation of zehal's devices is resident.
ze_result_t zeKernelCreate_(ze_module_handle_t hModule, const ze_kernel_desc_t* desc, ze_kernel_handle_t* phKernel) {
    return ze_guarded([&] {
        std::shared_ptr<ModuleObject> m;
        if (ze_result_t r = modules().get(hModule, &m); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !desc->pKernelName || !phKernel) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (desc->flags & ~kKernelFlags) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        hal::KernelRef k;
        if (ze_result_t r = m->module->create_kernel(desc->pKernelName, &k); r != ZE_RESULT_SUCCESS) return r;
        auto object = std::make_shared<KernelObject>(std::move(m), std::move(k));
        *phKernel = to_handle<ze_kernel_handle_t>(kernels().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

// Launches already appended keep what they use (the HAL kernel or its copy), so destroying
// a kernel with launches in flight is safe.
ze_result_t zeKernelDestroy_(ze_kernel_handle_t hKernel) {
    return ze_guarded([&] {
        if (kernels().remove(hKernel)) return ZE_RESULT_SUCCESS;
        std::shared_ptr<KernelObject> none;
        return kernels().get(hKernel, &none);
    });
}

// Runs `f` on the kernel of `hKernel`.
template <typename F>
ze_result_t with_kernel(ze_kernel_handle_t hKernel, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<KernelObject> k;
        if (ze_result_t r = kernels().get(hKernel, &k); r != ZE_RESULT_SUCCESS) return r;
        return f(*k);
    });
}

ze_result_t zeKernelSetGroupSize_(ze_kernel_handle_t hKernel, uint32_t groupSizeX, uint32_t groupSizeY,
                                  uint32_t groupSizeZ) {
    return with_kernel(hKernel, [&](KernelObject& k) { return k.set_group_size(groupSizeX, groupSizeY, groupSizeZ); });
}

// ZE_experimental_global_offset: the offset is kernel state, as the group size, captured by
// each launch appended after.
ze_result_t zeKernelSetGlobalOffsetExp_(ze_kernel_handle_t hKernel, uint32_t offsetX, uint32_t offsetY,
                                        uint32_t offsetZ) {
    return with_kernel(hKernel, [&](KernelObject& k) { return k.set_global_offset(offsetX, offsetY, offsetZ); });
}

// A zero global size is the specification's INVALID_GLOBAL_WIDTH_DIMENSION.
ze_result_t zeKernelSuggestGroupSize_(ze_kernel_handle_t hKernel, uint32_t globalSizeX, uint32_t globalSizeY,
                                      uint32_t globalSizeZ, uint32_t* groupSizeX, uint32_t* groupSizeY,
                                      uint32_t* groupSizeZ) {
    return with_kernel(hKernel, [&](KernelObject& k) {
        if (!groupSizeX || !groupSizeY || !groupSizeZ) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (globalSizeX == 0 || globalSizeY == 0 || globalSizeZ == 0)
            return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
        std::array<uint32_t, 3> size{};
        if (ze_result_t r = k.suggest_group_size({globalSizeX, globalSizeY, globalSizeZ}, &size);
            r != ZE_RESULT_SUCCESS)
            return r;
        *groupSizeX = size[0];
        *groupSizeY = size[1];
        *groupSizeZ = size[2];
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeKernelSetArgumentValue_(ze_kernel_handle_t hKernel, uint32_t argIndex, size_t argSize,
                                      const void* pArgValue) {
    return with_kernel(hKernel, [&](KernelObject& k) { return k.set_argument(argIndex, argSize, pArgValue); });
}

ze_result_t zeKernelSetIndirectAccess_(ze_kernel_handle_t hKernel, ze_kernel_indirect_access_flags_t flags) {
    return with_kernel(hKernel, [&](KernelObject& k) {
        if (flags & ~kIndirectFlags) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        k.set_indirect_access(flags);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeKernelGetIndirectAccess_(ze_kernel_handle_t hKernel, ze_kernel_indirect_access_flags_t* pFlags) {
    return with_kernel(hKernel, [&](KernelObject& k) {
        if (!pFlags) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *pFlags = k.indirect_access();
        return ZE_RESULT_SUCCESS;
    });
}

// A preference zehal's devices have no use for: accepted, as the specification lets a
// driver do.
ze_result_t zeKernelSetCacheConfig_(ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags) {
    return with_kernel(hKernel, [&](KernelObject&) {
        return flags & ~kCacheFlags ? ZE_RESULT_ERROR_INVALID_ENUMERATION : ZE_RESULT_SUCCESS;
    });
}

// Opaque identifiers: the kernel's from its module's and its name, the module's from its
// native binary, so a kernel of the same code has the same identifiers.
void fill_uuid(const KernelObject& k, ze_kernel_uuid_t* uuid) {
    const std::span<const uint8_t> binary = k.module().module->native_binary();
    const size_t mid = std::hash<std::string_view>{}({reinterpret_cast<const char*>(binary.data()), binary.size()});
    const size_t kid = mid ^ std::hash<std::string_view>{}(k.properties().name);
    std::memset(uuid, 0, sizeof *uuid);
    std::memcpy(uuid->mid, &mid, sizeof mid);
    std::memcpy(uuid->kid, &kid, sizeof kid);
}

// Subgroups are not exposed (a work-item is its own subgroup), and no code spills.
ze_result_t zeKernelGetProperties_(ze_kernel_handle_t hKernel, ze_kernel_properties_t* p) {
    return with_kernel(hKernel, [&](KernelObject& k) {
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const hal::KernelProperties& kp = k.properties();
        p->numKernelArgs = static_cast<uint32_t>(kp.args.size());
        p->requiredGroupSizeX = kp.required_group_size[0];
        p->requiredGroupSizeY = kp.required_group_size[1];
        p->requiredGroupSizeZ = kp.required_group_size[2];
        p->requiredNumSubGroups = 0;
        p->requiredSubgroupSize = 0;
        p->maxSubgroupSize = 1;
        p->maxNumSubgroups = kp.max_group_size;
        p->localMemSize = kp.local_bytes;
        p->privateMemSize = kp.private_bytes;
        p->spillMemSize = 0;
        fill_uuid(k, &p->uuid);
        if (auto* preferred = find_in_chain<ze_kernel_preferred_group_size_properties_t>(
                p, {ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES}, ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES))
            preferred->preferredMultiple = 1;
        // The most work-items of a group this kernel runs with (the HAL kernel's: the device's
        // limit, the code's on CUDA, the required size where the kernel declares one).
        if (auto* largest = find_in_chain<ze_kernel_max_group_size_properties_ext_t>(
                p, {ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES}, ZEHAL_STYPE_KERNEL_MAX_GROUP_SIZE_EXT_PROPERTIES))
            largest->maxGroupSize = kp.max_group_size;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeKernelGetName_(ze_kernel_handle_t hKernel, size_t* pSize, char* pName) {
    return with_kernel(hKernel, [&](KernelObject& k) { return hand_out_string(k.properties().name, pSize, pName); });
}

// The kernel's source attributes as OpenCL C writes them, space-separated, as Intel's driver
// gives them: those the module keeps (reqd_work_group_size, work_group_size_hint,
// vec_type_hint, intel_reqd_sub_group_size); "" for a kernel without any. The string goes
// into the caller's array that *pString points to (the specification's char** is a typo it
// keeps).
ze_result_t zeKernelGetSourceAttributes_(ze_kernel_handle_t hKernel, uint32_t* pSize, char** pString) {
    return with_kernel(hKernel, [&](KernelObject& k) {
        if (!pSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const std::string& text = k.properties().source_attributes;
        const auto needed = static_cast<uint32_t>(text.size() + 1);
        if (!pString) {
            *pSize = needed;
            return ZE_RESULT_SUCCESS;
        }
        if (!*pString) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (*pSize < needed) return ZE_RESULT_ERROR_INVALID_SIZE;
        std::memcpy(*pString, text.c_str(), needed);
        *pSize = needed;
        return ZE_RESULT_SUCCESS;
    });
}

// Profiling information the compiler kept for tools: none (no flag asked or honoured, no
// token), as zehal's compiler produces no register or instrumentation data.
ze_result_t zetKernelGetProfileInfo_(zet_kernel_handle_t hKernel, zet_profile_properties_t* pProfileProperties) {
    return with_kernel(hKernel, [&](KernelObject&) {
        if (!pProfileProperties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        pProfileProperties->flags = 0;
        pProfileProperties->numTokens = 0;
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeKernelCreate, zeKernelCreate_),
    ZEHAL_ENTRY(zeKernelDestroy, zeKernelDestroy_),
    ZEHAL_ENTRY(zeKernelSetGroupSize, zeKernelSetGroupSize_),
    ZEHAL_ENTRY(zeKernelSuggestGroupSize, zeKernelSuggestGroupSize_),
    ZEHAL_ENTRY(zeKernelSetGlobalOffsetExp, zeKernelSetGlobalOffsetExp_),
    ZEHAL_ENTRY(zeKernelSetArgumentValue, zeKernelSetArgumentValue_),
    ZEHAL_ENTRY(zeKernelSetIndirectAccess, zeKernelSetIndirectAccess_),
    ZEHAL_ENTRY(zeKernelGetIndirectAccess, zeKernelGetIndirectAccess_),
    ZEHAL_ENTRY(zeKernelSetCacheConfig, zeKernelSetCacheConfig_),
    ZEHAL_ENTRY(zeKernelGetProperties, zeKernelGetProperties_),
    ZEHAL_ENTRY(zeKernelGetName, zeKernelGetName_),
    ZEHAL_ENTRY(zeKernelGetSourceAttributes, zeKernelGetSourceAttributes_),
    ZEHAL_ENTRY(zetKernelGetProfileInfo, zetKernelGetProfileInfo_),
};

}  // namespace

std::span<const Entry> kernel_entries() { return kEntries; }

}  // namespace zehal::ze_driver
