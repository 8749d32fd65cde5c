// SPIR-V to LLVM IR: the structural check, then the translator in its helper process
// (spirv_reader_main.cpp), whose bitcode is read back into a context of the caller's.
#include "spirv_reader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "child_process.hpp"

namespace zehal::compiler {

namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;
constexpr size_t kHeaderWords = 5;
constexpr uint32_t kMaxVersion = 0x00010600u;  // SPIR-V 1.6
constexpr uint32_t kOpCapability = 17;
constexpr std::chrono::seconds kTranslationLimit{120};
constexpr const char* kReaderName = "zehal-spirv-reader";

// Capabilities of OpenCL kernels that every target here compiles: Addresses, Linkage,
// Kernel, Vector16, Float16Buffer, Float16, Float64, Int64, Int64Atomics, Int16,
// GenericPointer, Int8, and the floating-point atomics of SPV_EXT_shader_atomic_float_add
// and SPV_EXT_shader_atomic_float_min_max: AtomicFloat32MinMaxEXT, AtomicFloat64MinMaxEXT,
// AtomicFloat16MinMaxEXT, AtomicFloat32AddEXT, AtomicFloat64AddEXT and (of
// SPV_EXT_shader_atomic_float16_add) AtomicFloat16AddEXT, the function pointers of
// SPV_INTEL_function_pointers: FunctionPointersINTEL and IndirectReferencesINTEL, and
// integers of any width (ArbitraryPrecisionIntegersINTEL: the optimiser of the compiler that
// made the SPIR-V narrows a loop's byte arithmetic to i7 or i9, which LLVM takes as it is).
// Images, pipes, device enqueue and groups are not.
constexpr std::array<uint32_t, 21> kSupportedCapabilities{4,  5,    6,    7,    8,    9,    10,   11,   12,   22,  38,
                                                          39, 5603, 5604, 5612, 5613, 5616, 5844, 6033, 6034, 6095};

ze_result_t fail(std::string* log, const std::string& why) {
    if (log != nullptr) {
        *log = why;
    }
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
}

uint32_t word_at(std::span<const uint8_t> spirv, size_t index) {
    uint32_t word = 0;
    std::memcpy(&word, spirv.data() + index * 4, sizeof(word));
    return word;
}

bool is_executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// The helper: $ZEHAL_SPIRV_READER, else beside the library that holds this code, else
// where this build wrote it.
std::string reader_path() {
    if (const char* path = std::getenv("ZEHAL_SPIRV_READER"); path != nullptr && *path != '\0') {
        return path;
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&reader_path), &info) != 0 && info.dli_fname != nullptr) {
        std::string library = info.dli_fname;
        const size_t slash = library.rfind('/');
        if (slash != std::string::npos) {
            std::string beside = library.substr(0, slash + 1) + kReaderName;
            if (is_executable(beside)) {
                return beside;
            }
        }
    }
    return ZEHAL_SPIRV_READER_BUILD_PATH;
}

}  // namespace

ze_result_t check_spirv(std::span<const uint8_t> spirv, std::string* log) {
    if (spirv.size() < kHeaderWords * 4) {
        return fail(log, "not SPIR-V: " + std::to_string(spirv.size()) + " bytes, shorter than a SPIR-V header");
    }
    if (spirv.size() % 4 != 0) {
        return fail(log, "not SPIR-V: " + std::to_string(spirv.size()) + " bytes is not a whole number of words");
    }
    const uint32_t magic = word_at(spirv, 0);
    if (magic == __builtin_bswap32(kSpirvMagic)) {
        return fail(log, "big-endian SPIR-V is not supported");
    }
    if (magic != kSpirvMagic) {
        return fail(log, "not SPIR-V: bad magic number");
    }
    const uint32_t version = word_at(spirv, 1);
    if ((version & 0xff0000ffu) != 0 || version < 0x00010000u || version > kMaxVersion) {
        return fail(log, "unknown SPIR-V version word " + std::to_string(version));
    }
    const uint32_t bound = word_at(spirv, 3);
    if (bound == 0 || bound > kMaxSpirvIdBound) {
        return fail(log, "SPIR-V id bound " + std::to_string(bound) + " is out of range (1.." +
                             std::to_string(kMaxSpirvIdBound) + ")");
    }
    const size_t words = spirv.size() / 4;
    size_t at = kHeaderWords;
    while (at < words) {
        const uint32_t count = word_at(spirv, at) >> 16;
        if (count == 0 || at + count > words) {
            return fail(log, "truncated or malformed SPIR-V: instruction at word " + std::to_string(at) +
                                 " has word count " + std::to_string(count));
        }
        if ((word_at(spirv, at) & 0xffffu) == kOpCapability && count == 2) {
            const uint32_t capability = word_at(spirv, at + 1);
            if (std::find(kSupportedCapabilities.begin(), kSupportedCapabilities.end(), capability) ==
                kSupportedCapabilities.end()) {
                return fail(log, "SPIR-V capability " + std::to_string(capability) +
                                     " is not supported (images, pipes, groups and device enqueue are not)");
            }
        }
        at += count;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t translate_spirv(std::span<const uint8_t> spirv, std::string* bitcode, std::string* log) {
    const std::string reader = reader_path();
    const ChildResult child = run_child(
        reader, std::string_view(reinterpret_cast<const char*>(spirv.data()), spirv.size()), kTranslationLimit);
    if (!child.started) {
        return fail(log, "SPIR-V translation failed: " + child.out_text);
    }
    if (child.timed_out) {
        return fail(log, "SPIR-V translation failed: the translator did not finish in " +
                             std::to_string(kTranslationLimit.count()) + " s");
    }
    if (child.exit_status != 0 || child.out_text.empty()) {
        std::string why = child.err_text.empty() ? std::string("no reason given") : child.err_text;
        while (!why.empty() && why.back() == '\n') {
            why.pop_back();
        }
        if (child.signal != 0) {
            why += " (the translator ended with signal " + std::to_string(child.signal) + ")";
        }
        return fail(log, "SPIR-V translation failed: " + why);
    }
    *bitcode = child.out_text;
    return ZE_RESULT_SUCCESS;
}

ze_result_t parse_bitcode(std::string_view bitcode, TranslatedModule* out, std::string* log) {
    auto context = std::make_unique<llvm::LLVMContext>();
    context->setOpaquePointers(true);  // as libclc's bitcode, which the PTX target links
    auto buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(bitcode.data(), bitcode.size()), "spirv", false);
    auto module = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *context);
    if (!module) {
        return fail(log, "cannot read the translated module: " + llvm::toString(module.takeError()));
    }
    out->context = std::move(context);
    out->module = std::move(*module);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
