// Kernel signatures from the OpenCL metadata the translator attaches to kernels, and the
// module's program-scope variables.
#include "kernel_signature.hpp"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

#include <set>
#include <string>

namespace zehal::compiler {

namespace {

// The kind of argument `index` of `kernel`: its address space, or an image or sampler
// named by its OpenCL type.
ArgKind arg_kind(const llvm::Function& kernel, unsigned index) {
    if (const llvm::MDNode* types = kernel.getMetadata("kernel_arg_type");
        types != nullptr && index < types->getNumOperands()) {
        if (const auto* name = llvm::dyn_cast<llvm::MDString>(types->getOperand(index))) {
            const llvm::StringRef type = name->getString();
            if (type.startswith("image") || type.contains("image1d") || type.contains("image2d") ||
                type.contains("image3d")) {
                return ArgKind::image;
            }
            if (type == "sampler_t") {
                return ArgKind::sampler;
            }
        }
    }
    const llvm::Argument* arg = kernel.getArg(index);
    if (!arg->getType()->isPointerTy() || arg->hasByValAttr()) {
        return ArgKind::value;
    }
    switch (arg->getType()->getPointerAddressSpace()) {
        case kGlobalSpace:
            return ArgKind::global;
        case kConstantSpace:
            return ArgKind::constant;
        case kLocalSpace:
            return ArgKind::local;
        default:
            return ArgKind::global;  // generic pointers address global memory here
    }
}

uint32_t arg_size(const llvm::Function& kernel, unsigned index, ArgKind kind) {
    const llvm::DataLayout& layout = kernel.getParent()->getDataLayout();
    const llvm::Argument* arg = kernel.getArg(index);
    if (kind == ArgKind::local) {
        return 0;
    }
    if (arg->hasByValAttr()) {
        return static_cast<uint32_t>(layout.getTypeAllocSize(arg->getParamByValType()));
    }
    if (arg->getType()->isPointerTy()) {
        return 8;
    }
    return static_cast<uint32_t>(layout.getTypeStoreSize(arg->getType()));
}

std::array<uint32_t, 3> required_group_size(const llvm::Function& kernel) {
    std::array<uint32_t, 3> size{};
    const llvm::MDNode* node = kernel.getMetadata("reqd_work_group_size");
    if (node == nullptr) {
        return size;
    }
    for (unsigned d = 0; d < 3 && d < node->getNumOperands(); ++d) {
        if (auto* value = llvm::mdconst::dyn_extract<llvm::ConstantInt>(node->getOperand(d))) {
            size[d] = static_cast<uint32_t>(value->getZExtValue());
        }
    }
    return size;
}

// The functions `root` calls, directly or not, and itself.
std::set<const llvm::Function*> reachable(const llvm::Function& root) {
    std::set<const llvm::Function*> seen{&root};
    std::vector<const llvm::Function*> work{&root};
    while (!work.empty()) {
        const llvm::Function* f = work.back();
        work.pop_back();
        for (const llvm::BasicBlock& block : *f) {
            for (const llvm::Instruction& inst : block) {
                if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
                    const llvm::Function* callee = call->getCalledFunction();
                    if (callee != nullptr && !callee->isDeclaration() && seen.insert(callee).second) {
                        work.push_back(callee);
                    }
                }
            }
        }
    }
    return seen;
}

// Whether a use of a constant ends in an instruction of one of `functions`.
bool used_in(const llvm::Value& value, const std::set<const llvm::Function*>& functions) {
    for (const llvm::User* user : value.users()) {
        if (const auto* inst = llvm::dyn_cast<llvm::Instruction>(user)) {
            if (functions.count(inst->getFunction()) != 0) {
                return true;
            }
        } else if (llvm::isa<llvm::Constant>(user) && used_in(*user, functions)) {
            return true;
        }
    }
    return false;
}

uint32_t static_local_bytes(const llvm::Function& kernel) {
    const llvm::Module& module = *kernel.getParent();
    const auto functions = reachable(kernel);
    uint64_t bytes = 0;
    for (const llvm::GlobalVariable& global : module.globals()) {
        if (global.getAddressSpace() == kLocalSpace && used_in(global, functions)) {
            bytes += module.getDataLayout().getTypeAllocSize(global.getValueType());
        }
    }
    return static_cast<uint32_t>(bytes);
}

uint32_t private_bytes(const llvm::Function& kernel) {
    const llvm::DataLayout& layout = kernel.getParent()->getDataLayout();
    uint64_t bytes = 0;
    for (const llvm::Function* f : reachable(kernel)) {
        for (const llvm::Instruction& inst : f->getEntryBlock()) {
            if (const auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
                if (auto size = alloca->getAllocationSizeInBits(layout)) {
                    bytes += *size / 8;
                }
            }
        }
    }
    return static_cast<uint32_t>(bytes);
}

// "name(x,y,z)" of a metadata node of three integers (reqd_work_group_size,
// work_group_size_hint); "" when `kernel` has no such node.
std::string size_attribute(const llvm::Function& kernel, const char* name) {
    const llvm::MDNode* node = kernel.getMetadata(name);
    if (node == nullptr) {
        return {};
    }
    std::string text = std::string(name) + "(";
    for (unsigned d = 0; d < node->getNumOperands(); ++d) {
        const auto* value = llvm::mdconst::dyn_extract<llvm::ConstantInt>(node->getOperand(d));
        text += (d ? "," : "") + std::to_string(value ? value->getZExtValue() : 0);
    }
    return text + ")";
}

// The OpenCL C name of `type` (a scalar or vector the translator gives vec_type_hint as),
// unsigned integers when `is_signed` is false; "" for another type.
std::string opencl_type_name(llvm::Type* type, bool is_signed) {
    std::string suffix;
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
        suffix = std::to_string(vector->getNumElements());
        type = vector->getElementType();
    }
    std::string base;
    if (type->isHalfTy()) {
        base = "half";
    } else if (type->isFloatTy()) {
        base = "float";
    } else if (type->isDoubleTy()) {
        base = "double";
    } else if (type->isIntegerTy(8)) {
        base = is_signed ? "char" : "uchar";
    } else if (type->isIntegerTy(16)) {
        base = is_signed ? "short" : "ushort";
    } else if (type->isIntegerTy(32)) {
        base = is_signed ? "int" : "uint";
    } else if (type->isIntegerTy(64)) {
        base = is_signed ? "long" : "ulong";
    } else {
        return {};
    }
    return base + suffix;
}

// The attributes of `kernel` as OpenCL C writes them, space-separated, from the metadata the
// translator makes of the SPIR-V execution modes (LocalSize, LocalSizeHint, VecTypeHint,
// SubgroupSize). SPIR-V's VecTypeHint has no sign: an unsigned type reads as its signed one.
std::string source_attributes(const llvm::Function& kernel) {
    std::vector<std::string> parts{size_attribute(kernel, "reqd_work_group_size"),
                                   size_attribute(kernel, "work_group_size_hint")};
    if (const llvm::MDNode* hint = kernel.getMetadata("vec_type_hint"); hint && hint->getNumOperands() >= 2) {
        const auto* type = llvm::dyn_cast<llvm::ValueAsMetadata>(hint->getOperand(0));
        const auto* sign = llvm::mdconst::dyn_extract<llvm::ConstantInt>(hint->getOperand(1));
        const std::string name = type ? opencl_type_name(type->getType(), sign && !sign->isZero()) : std::string();
        if (!name.empty()) {
            parts.push_back("vec_type_hint(" + name + ")");
        }
    }
    if (const llvm::MDNode* sub = kernel.getMetadata("intel_reqd_sub_group_size"); sub && sub->getNumOperands() > 0) {
        if (const auto* size = llvm::mdconst::dyn_extract<llvm::ConstantInt>(sub->getOperand(0))) {
            parts.push_back("intel_reqd_sub_group_size(" + std::to_string(size->getZExtValue()) + ")");
        }
    }
    std::string text;
    for (const std::string& part : parts) {
        if (!part.empty()) {
            text += (text.empty() ? "" : " ") + part;
        }
    }
    return text;
}

}  // namespace

std::vector<llvm::Function*> kernel_functions(llvm::Module& module) {
    std::vector<llvm::Function*> kernels;
    for (llvm::Function& f : module) {
        if (!f.isDeclaration() && f.getCallingConv() == llvm::CallingConv::SPIR_KERNEL) {
            kernels.push_back(&f);
        }
    }
    return kernels;
}

std::vector<KernelInfo> read_kernels(const llvm::Module& module) {
    std::vector<KernelInfo> kernels;
    for (llvm::Function* f : kernel_functions(const_cast<llvm::Module&>(module))) {
        KernelInfo info;
        info.name = f->getName().str();
        for (unsigned i = 0; i < f->arg_size(); ++i) {
            ArgInfo arg;
            arg.kind = arg_kind(*f, i);
            arg.size = arg_size(*f, i, arg.kind);
            info.args.push_back(arg);
        }
        info.required_group_size = required_group_size(*f);
        info.attributes = source_attributes(*f);
        info.private_bytes = private_bytes(*f);
        info.local_bytes = static_local_bytes(*f);
        kernels.push_back(std::move(info));
    }
    return kernels;
}

std::vector<GlobalInfo> read_globals(const llvm::Module& module) {
    std::vector<GlobalInfo> globals;
    const llvm::DataLayout& layout = module.getDataLayout();
    for (const llvm::GlobalVariable& g : module.globals()) {
        const unsigned space = g.getAddressSpace();
        if (g.isDeclaration() || g.hasLocalLinkage() || !g.hasName() || g.getName().startswith("llvm.") ||
            (space != kGlobalSpace && space != kConstantSpace))
            continue;
        globals.push_back(GlobalInfo{g.getName().str(), layout.getTypeAllocSize(g.getValueType()).getFixedSize(),
                                     space == kConstantSpace || g.isConstant()});
    }
    return globals;
}

}  // namespace zehal::compiler
