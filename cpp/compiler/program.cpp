// Program::from_spirv: check, translate, read the kernels and globals, digest.
#include <llvm/Support/SHA256.h>

#include <atomic>

#include "kernel_signature.hpp"
#include "module_cache.hpp"
#include "program_impl.hpp"
#include "spirv_reader.hpp"

namespace zehal::compiler {

namespace {

// Compilations run in this process; relaxed: a statistic read by tests after the builds
// they count have returned.
std::atomic<uint64_t> compilations{0};

// The translation's cache target: names the translator's output format (LLVM 15 bitcode,
// OpenCL 1.2 builtins).
constexpr std::string_view kTranslationTarget = "llvm15-cl12";

std::array<uint8_t, 32> digest_of(std::span<const uint8_t> spirv, std::string_view build_flags) {
    llvm::SHA256 hash;
    hash.update(llvm::ArrayRef<uint8_t>(spirv.data(), spirv.size()));
    const uint8_t separator = 0;
    hash.update(llvm::ArrayRef<uint8_t>(&separator, 1));
    hash.update(llvm::StringRef(build_flags.data(), build_flags.size()));
    return hash.final();
}

}  // namespace

void count_compilation() noexcept { compilations.fetch_add(1, std::memory_order_relaxed); }

uint64_t compilation_count() noexcept { return compilations.load(std::memory_order_relaxed); }

int ProgramImpl::find(std::string_view name) const {
    for (size_t i = 0; i < kernels_.size(); ++i) {
        if (kernels_[i].name == name) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

ze_result_t ProgramImpl::translate(TranslatedModule* out, std::string* log) const {
    return parse_bitcode(*bitcode_, out, log);
}

ze_result_t Program::from_spirv(std::span<const uint8_t> spirv, std::string_view build_flags,
                                std::shared_ptr<const Program>* out, std::string* log) {
    if (out == nullptr) {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    out->reset();
    std::string ignored;
    std::string* message = log != nullptr ? log : &ignored;
    message->clear();
    if (ze_result_t r = check_spirv(spirv, message); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    // The translation depends on the SPIR-V alone: its cache key leaves the flags out.
    const CacheKey key = cache_key(digest_of(spirv, ""), kTranslationTarget);
    std::shared_ptr<const std::string> bitcode = cache_find("bc", key);
    if (!bitcode) {
        std::string translated;
        if (ze_result_t r = translate_spirv(spirv, &translated, message); r != ZE_RESULT_SUCCESS) {
            return r;
        }
        count_compilation();
        cache_store("bc", key, translated);
        bitcode = cache_find("bc", key);
    }
    TranslatedModule module;
    if (ze_result_t r = parse_bitcode(*bitcode, &module, message); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    std::vector<KernelInfo> kernels = read_kernels(*module.module);
    std::vector<GlobalInfo> globals = read_globals(*module.module);
    *out = std::make_shared<ProgramImpl>(std::move(bitcode), std::move(kernels), std::move(globals),
                                         read_linkage(spirv), digest_of(spirv, build_flags));
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
