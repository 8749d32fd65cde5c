// A shared library opened at run time (dlopen), closed when the object goes.
#pragma once

#include <dlfcn.h>

#include <string>
#include <utility>

namespace zehal {

class DynLib {
public:
    DynLib() = default;
    // Opens the first of `names` that loads; error() says why none did.
    template <typename... Names>
    static DynLib open_first(const Names&... names) {
        DynLib lib;
        for (const char* name : {static_cast<const char*>(names)...}) {
            lib.handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (lib.handle_) {
                lib.error_.clear();
                return lib;
            }
            const char* why = dlerror();
            if (!lib.error_.empty()) lib.error_ += "; ";
            lib.error_ += why ? why : name;
        }
        return lib;
    }
    DynLib(DynLib&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), error_(std::move(o.error_)) {}
    DynLib& operator=(DynLib&& o) noexcept {
        std::swap(handle_, o.handle_);
        std::swap(error_, o.error_);
        return *this;
    }
    DynLib(const DynLib&) = delete;
    DynLib& operator=(const DynLib&) = delete;
    ~DynLib() {
        if (handle_) dlclose(handle_);
    }

    explicit operator bool() const noexcept { return handle_ != nullptr; }
    // Why the library did not open.
    const std::string& error() const noexcept { return error_; }
    // The symbol `name` as a function pointer of type F, or null.
    template <typename F>
    F symbol(const char* name) const noexcept {
        return handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
    }

private:
    void* handle_ = nullptr;
    std::string error_;
};

}  // namespace zehal
