// Bodies for the OpenCL builtins the translator declares, written with IRBuilder.
#include "host_builtins.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <cctype>
#include <map>
#include <numbers>
#include <optional>
#include <set>

namespace zehal::compiler {

namespace {

// A mangled OpenCL name split: the function's name and the first parameter's element
// code ('f', 'd', 'i', 'j'...; the pointee's code for atomics).
struct Mangled {
    std::string name;
    char element = 0;
    bool is_signed = false;
};

std::optional<Mangled> demangle(llvm::StringRef mangled) {
    if (!mangled.consume_front("_Z")) {
        return std::nullopt;
    }
    size_t length = 0;
    while (!mangled.empty() && std::isdigit(static_cast<unsigned char>(mangled.front()))) {
        length = length * 10 + static_cast<size_t>(mangled.front() - '0');
        mangled = mangled.drop_front();
    }
    if (length == 0 || length > mangled.size()) {
        return std::nullopt;
    }
    Mangled result;
    result.name = mangled.take_front(length).str();
    llvm::StringRef params = mangled.drop_front(length);
    if (size_t volatile_at = params.find('V'); params.startswith("P") && volatile_at != llvm::StringRef::npos) {
        params = params.drop_front(volatile_at + 1);  // atomics: P U3AS1 V <element>
    }
    if (params.consume_front("Dv")) {
        params = params.drop_until([](char c) { return c == '_'; }).drop_front();
    }
    result.element = params.empty() ? 0 : params.front();
    result.is_signed = result.element == 'c' || result.element == 'a' || result.element == 's' ||
                       result.element == 'i' || result.element == 'l';
    return result;
}

// `value` as `type`: a scalar splatted to a vector type.
llvm::Value* fit(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Type* type) {
    if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
        vector != nullptr && !value->getType()->isVectorTy()) {
        return b.CreateVectorSplat(vector->getNumElements(), value);
    }
    return value;
}

llvm::Value* constant_like(llvm::Type* type, double value) { return llvm::ConstantFP::get(type, value); }

// Applies a scalar C library function (`name` + "f" for float) to each element.
llvm::Value* call_libm(llvm::IRBuilder<>& b, const std::string& name, llvm::ArrayRef<llvm::Value*> args,
                       llvm::Type* type) {
    llvm::Module* module = b.GetInsertBlock()->getModule();
    llvm::Type* scalar = type->getScalarType();
    const std::string symbol = scalar->isFloatTy() ? name + "f" : name;
    std::vector<llvm::Type*> params(args.size(), scalar);
    llvm::FunctionCallee callee = module->getOrInsertFunction(symbol, llvm::FunctionType::get(scalar, params, false));
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
    if (vector == nullptr) {
        return b.CreateCall(callee, args);
    }
    llvm::Value* result = llvm::PoisonValue::get(type);
    for (unsigned i = 0; i < vector->getNumElements(); ++i) {
        std::vector<llvm::Value*> elements;
        for (llvm::Value* arg : args) {
            elements.push_back(b.CreateExtractElement(arg, i));
        }
        result = b.CreateInsertElement(result, b.CreateCall(callee, elements), i);
    }
    return result;
}

// fadd, fmin or fmax (`kind`) of half f(pointer, operand) as a compare-and-swap loop
// on the 16 bits: LLVM 15's NVPTX backend cannot select atomicrmw of half (the host's
// would make the same loop). Returns the value the exchange replaced.
llvm::Value* emit_half_cas_loop(llvm::IRBuilder<>& b, llvm::AtomicRMWInst::BinOp kind, llvm::Function& f) {
    const auto order = llvm::AtomicOrdering::Monotonic;
    llvm::Value* pointer = f.getArg(0);
    llvm::Value* operand = f.getArg(1);
    llvm::Type* half = b.getHalfTy();
    llvm::Type* bits = b.getInt16Ty();
    llvm::BasicBlock* entry = b.GetInsertBlock();
    llvm::LoadInst* first = b.CreateAlignedLoad(bits, pointer, llvm::Align(2));
    first->setAtomic(order);
    auto* loop = llvm::BasicBlock::Create(f.getContext(), "cas", &f);
    auto* done = llvm::BasicBlock::Create(f.getContext(), "cas_done", &f);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* expected = b.CreatePHI(bits, 2);
    expected->addIncoming(first, entry);
    llvm::Value* current = b.CreateBitCast(expected, half);
    llvm::Value* result = nullptr;
    if (kind == llvm::AtomicRMWInst::FAdd) {
        result = b.CreateFAdd(current, operand);
    } else {
        const auto id = kind == llvm::AtomicRMWInst::FMin ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum;
        result = b.CreateBinaryIntrinsic(id, current, operand);
    }
    llvm::Value* pair = b.CreateAtomicCmpXchg(pointer, expected, b.CreateBitCast(result, bits), llvm::MaybeAlign(2),
                                              order, order);
    llvm::Value* seen = b.CreateExtractValue(pair, 0);
    expected->addIncoming(seen, loop);
    b.CreateCondBr(b.CreateExtractValue(pair, 1), done, loop);
    b.SetInsertPoint(done);
    return current;
}

// The atomics of floating-point elements: add, min, max and xchg on half, float and double
// (cl_ext_float_atomics, which the translator writes as OpenCL 1.2's atomic_add,
// atomic_min... of the element type; a subtraction adds the negated value). An add of +0.0
// is a load: the translator writes OpAtomicLoad that way, and a load must not turn a
// stored -0.0 into +0.0.
llvm::Value* emit_float_atomic(llvm::IRBuilder<>& b, const std::string& op, llvm::Function& f) {
    llvm::Value* pointer = f.getArg(0);
    llvm::Type* type = f.getReturnType();
    const auto order = llvm::AtomicOrdering::Monotonic;
    static const std::map<std::string, llvm::AtomicRMWInst::BinOp> kOps{
        {"add", llvm::AtomicRMWInst::FAdd},
        {"min", llvm::AtomicRMWInst::FMin},
        {"max", llvm::AtomicRMWInst::FMax},
        {"xchg", llvm::AtomicRMWInst::Xchg},
    };
    auto it = kOps.find(op);
    if (it == kOps.end() || f.arg_size() != 2) {
        return nullptr;
    }
    llvm::Value* operand = f.getArg(1);
    const bool half_arithmetic = type->isHalfTy() && op != "xchg";
    if (op != "add") {
        return half_arithmetic ? emit_half_cas_loop(b, it->second, f)
                               : b.CreateAtomicRMW(it->second, pointer, operand, llvm::MaybeAlign(), order);
    }
    // Once inlined with a constant operand, only one of the two paths remains.
    llvm::LLVMContext& c = f.getContext();
    auto* load_block = llvm::BasicBlock::Create(c, "load", &f);
    auto* add_block = llvm::BasicBlock::Create(c, "add", &f);
    llvm::Type* bits = b.getIntNTy(type->getPrimitiveSizeInBits());
    b.CreateCondBr(b.CreateICmpEQ(b.CreateBitCast(operand, bits), llvm::ConstantInt::get(bits, 0)), load_block,
                   add_block);
    b.SetInsertPoint(load_block);
    llvm::LoadInst* load = b.CreateAlignedLoad(type, pointer, llvm::Align(type->getPrimitiveSizeInBits() / 8));
    load->setAtomic(order);
    b.CreateRet(load);
    b.SetInsertPoint(add_block);
    return half_arithmetic ? emit_half_cas_loop(b, llvm::AtomicRMWInst::FAdd, f)
                           : b.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, pointer, operand, llvm::MaybeAlign(), order);
}

llvm::Value* emit_atomic(llvm::IRBuilder<>& b, const Mangled& m, llvm::Function& f) {
    const llvm::StringRef full = m.name;
    if (!full.startswith("atomic_") && !full.startswith("atom_")) {
        return nullptr;
    }
    const std::string op = full.substr(full.find('_') + 1).str();
    if (f.getReturnType()->isFloatingPointTy()) {
        return emit_float_atomic(b, op, f);
    }
    llvm::Value* pointer = f.getArg(0);
    const auto order = llvm::AtomicOrdering::Monotonic;  // OpenCL 1.2 atomics are relaxed
    if (op == "cmpxchg") {
        llvm::Value* pair = b.CreateAtomicCmpXchg(pointer, f.getArg(1), f.getArg(2), llvm::MaybeAlign(), order, order);
        return b.CreateExtractValue(pair, 0);
    }
    static const std::map<std::string, llvm::AtomicRMWInst::BinOp> kOps{
        {"add", llvm::AtomicRMWInst::Add}, {"sub", llvm::AtomicRMWInst::Sub}, {"xchg", llvm::AtomicRMWInst::Xchg},
        {"and", llvm::AtomicRMWInst::And}, {"or", llvm::AtomicRMWInst::Or},   {"xor", llvm::AtomicRMWInst::Xor},
        {"inc", llvm::AtomicRMWInst::Add}, {"dec", llvm::AtomicRMWInst::Sub},
    };
    llvm::AtomicRMWInst::BinOp kind;
    if (op == "min") {
        kind = m.is_signed ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin;
    } else if (op == "max") {
        kind = m.is_signed ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax;
    } else if (auto it = kOps.find(op); it != kOps.end()) {
        kind = it->second;
    } else {
        return nullptr;
    }
    llvm::Value* operand = f.arg_size() > 1 ? static_cast<llvm::Value*>(f.getArg(1))
                                            : llvm::ConstantInt::get(f.getReturnType(), 1);
    return b.CreateAtomicRMW(kind, pointer, operand, llvm::MaybeAlign(), order);
}

llvm::Value* emit_float(llvm::IRBuilder<>& b, std::string name, llvm::Function& f) {
    llvm::Type* type = f.getReturnType();
    std::vector<llvm::Value*> a;
    for (llvm::Argument& arg : f.args()) {
        a.push_back(arg.getType()->isFPOrFPVectorTy() ? fit(b, &arg, type) : &arg);
    }
    for (const std::string prefix : {"native_", "half_"}) {
        if (name.rfind(prefix, 0) == 0) {
            name = name.substr(prefix.size());
        }
    }
    static const std::map<std::string, llvm::Intrinsic::ID> kUnary{
        {"sqrt", llvm::Intrinsic::sqrt}, {"fabs", llvm::Intrinsic::fabs},   {"floor", llvm::Intrinsic::floor},
        {"ceil", llvm::Intrinsic::ceil}, {"trunc", llvm::Intrinsic::trunc}, {"round", llvm::Intrinsic::round},
        {"rint", llvm::Intrinsic::rint}, {"exp", llvm::Intrinsic::exp},     {"exp2", llvm::Intrinsic::exp2},
        {"log", llvm::Intrinsic::log},   {"log2", llvm::Intrinsic::log2},   {"log10", llvm::Intrinsic::log10},
        {"sin", llvm::Intrinsic::sin},   {"cos", llvm::Intrinsic::cos},
    };
    static const std::map<std::string, llvm::Intrinsic::ID> kBinary{
        {"fmin", llvm::Intrinsic::minnum},       {"fmax", llvm::Intrinsic::maxnum}, {"min", llvm::Intrinsic::minnum},
        {"max", llvm::Intrinsic::maxnum},        {"pow", llvm::Intrinsic::pow},     {"powr", llvm::Intrinsic::pow},
        {"copysign", llvm::Intrinsic::copysign},
    };
    if (auto it = kUnary.find(name); it != kUnary.end() && a.size() == 1) {
        return b.CreateUnaryIntrinsic(it->second, a[0]);
    }
    if (auto it = kBinary.find(name); it != kBinary.end() && a.size() == 2) {
        return b.CreateBinaryIntrinsic(it->second, a[0], a[1]);
    }
    const auto one = constant_like(type, 1.0);
    const auto zero = constant_like(type, 0.0);
    if (name == "rsqrt" && a.size() == 1) {
        return b.CreateFDiv(one, b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]));
    }
    if (name == "recip" && a.size() == 1) {
        return b.CreateFDiv(one, a[0]);
    }
    if (name == "divide" && a.size() == 2) {
        return b.CreateFDiv(a[0], a[1]);
    }
    if (name == "fmod" && a.size() == 2) {
        return b.CreateFRem(a[0], a[1]);
    }
    if (name == "fma" && a.size() == 3) {
        return b.CreateIntrinsic(llvm::Intrinsic::fma, {type}, a);
    }
    if (name == "mad" && a.size() == 3) {
        return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, a);
    }
    if (name == "clamp" && a.size() == 3) {
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum,
                                       b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a[0], a[1]), a[2]);
    }
    if (name == "mix" && a.size() == 3) {
        return b.CreateFAdd(a[0], b.CreateFMul(b.CreateFSub(a[1], a[0]), a[2]));
    }
    if (name == "step" && a.size() == 2) {
        return b.CreateSelect(b.CreateFCmpOLT(a[1], a[0]), zero, one);
    }
    if (name == "sign" && a.size() == 1) {
        llvm::Value* magnitude = b.CreateSelect(
            b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]), zero), one, zero);
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, a[0]);
    }
    if (name == "degrees" && a.size() == 1) {
        return b.CreateFMul(a[0], constant_like(type, 180.0 / std::numbers::pi));
    }
    if (name == "radians" && a.size() == 1) {
        return b.CreateFMul(a[0], constant_like(type, std::numbers::pi / 180.0));
    }
    if (name == "pown" && a.size() == 2) {
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a[0],
                                       fit(b, b.CreateSIToFP(a[1], type->getScalarType()), type));
    }
    static const std::set<std::string> kLibmUnary{"tan",   "asin",  "acos",   "atan",   "sinh",  "cosh",  "tanh",
                                                  "asinh", "acosh", "atanh",  "exp10",  "expm1", "log1p", "cbrt",
                                                  "erf",   "erfc",  "tgamma", "lgamma", "logb"};
    static const std::set<std::string> kLibmBinary{"atan2", "hypot", "fdim", "remainder", "nextafter"};
    if ((a.size() == 1 && kLibmUnary.count(name) != 0) || (a.size() == 2 && kLibmBinary.count(name) != 0)) {
        return call_libm(b, name, a, type);
    }
    return nullptr;
}

// The geometric functions of float vectors (and scalars): dot, length, distance, normalize.
llvm::Value* emit_geometric(llvm::IRBuilder<>& b, const std::string& name, llvm::Function& f) {
    auto dot = [&](llvm::Value* x, llvm::Value* y) -> llvm::Value* {
        llvm::Value* product = b.CreateFMul(x, y);
        if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(product->getType())) {
            llvm::Value* sum = b.CreateExtractElement(product, uint64_t{0});
            for (unsigned i = 1; i < vector->getNumElements(); ++i) {
                sum = b.CreateFAdd(sum, b.CreateExtractElement(product, i));
            }
            return sum;
        }
        return product;
    };
    if (name == "dot" && f.arg_size() == 2) {
        return dot(f.getArg(0), f.getArg(1));
    }
    if (name == "length" && f.arg_size() == 1) {
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, dot(f.getArg(0), f.getArg(0)));
    }
    if (name == "distance" && f.arg_size() == 2) {
        llvm::Value* d = b.CreateFSub(f.getArg(0), f.getArg(1));
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, dot(d, d));
    }
    if (name == "normalize" && f.arg_size() == 1) {
        llvm::Value* length = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, dot(f.getArg(0), f.getArg(0)));
        return b.CreateFDiv(f.getArg(0), fit(b, length, f.getReturnType()));
    }
    return nullptr;
}

llvm::Value* emit_integer(llvm::IRBuilder<>& b, const Mangled& m, llvm::Function& f) {
    llvm::Type* type = f.getReturnType();
    std::vector<llvm::Value*> a;
    for (llvm::Argument& arg : f.args()) {
        a.push_back(fit(b, &arg, type));
    }
    const std::string& name = m.name;
    const bool s = m.is_signed;
    auto min = [&](llvm::Value* x, llvm::Value* y) {
        return b.CreateSelect(s ? b.CreateICmpSLT(x, y) : b.CreateICmpULT(x, y), x, y);
    };
    auto max = [&](llvm::Value* x, llvm::Value* y) {
        return b.CreateSelect(s ? b.CreateICmpSGT(x, y) : b.CreateICmpUGT(x, y), x, y);
    };
    if (name == "min" && a.size() == 2) {
        return min(a[0], a[1]);
    }
    if (name == "max" && a.size() == 2) {
        return max(a[0], a[1]);
    }
    if (name == "clamp" && a.size() == 3) {
        return min(max(a[0], a[1]), a[2]);
    }
    if (name == "abs" && a.size() == 1) {
        return s ? b.CreateSelect(b.CreateICmpSLT(a[0], llvm::Constant::getNullValue(type)), b.CreateNeg(a[0]), a[0])
                 : a[0];
    }
    if (name == "abs_diff" && a.size() == 2) {
        return b.CreateSub(max(a[0], a[1]), min(a[0], a[1]));
    }
    if (name == "popcount" && a.size() == 1) {
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, a[0]);
    }
    if ((name == "clz" || name == "ctz") && a.size() == 1) {
        return b.CreateBinaryIntrinsic(name == "clz" ? llvm::Intrinsic::ctlz : llvm::Intrinsic::cttz, a[0],
                                       b.getFalse());
    }
    if (name == "rotate" && a.size() == 2) {
        return b.CreateIntrinsic(llvm::Intrinsic::fshl, {type}, {a[0], a[0], a[1]});
    }
    if (name == "mul24" && a.size() == 2) {
        return b.CreateMul(a[0], a[1]);
    }
    if (name == "mad24" && a.size() == 3) {
        return b.CreateAdd(b.CreateMul(a[0], a[1]), a[2]);
    }
    if ((name == "add_sat" || name == "sub_sat") && a.size() == 2) {
        const bool add = name == "add_sat";
        const auto id = add ? (s ? llvm::Intrinsic::sadd_sat : llvm::Intrinsic::uadd_sat)
                            : (s ? llvm::Intrinsic::ssub_sat : llvm::Intrinsic::usub_sat);
        return b.CreateBinaryIntrinsic(id, a[0], a[1]);
    }
    if (name == "mul_hi" && a.size() == 2) {
        const unsigned bits = type->getScalarSizeInBits();
        llvm::Type* wide = llvm::IntegerType::get(b.getContext(), bits * 2);
        if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
            wide = llvm::FixedVectorType::get(wide, vector->getNumElements());
        }
        auto extend = [&](llvm::Value* v) { return s ? b.CreateSExt(v, wide) : b.CreateZExt(v, wide); };
        llvm::Value* product = b.CreateMul(extend(a[0]), extend(a[1]));
        return b.CreateTrunc(b.CreateLShr(product, llvm::ConstantInt::get(wide, bits)), type);
    }
    if (name == "hadd" && a.size() == 2) {
        llvm::Value* one = llvm::ConstantInt::get(type, 1);
        llvm::Value* half = s ? b.CreateAdd(b.CreateAShr(a[0], one), b.CreateAShr(a[1], one))
                              : b.CreateAdd(b.CreateLShr(a[0], one), b.CreateLShr(a[1], one));
        return b.CreateAdd(half, b.CreateAnd(b.CreateAnd(a[0], a[1]), one));
    }
    return nullptr;
}

// vloadN(offset, pointer) and vstoreN(data, offset, pointer).
llvm::Value* emit_vector_memory(llvm::IRBuilder<>& b, const std::string& name, llvm::Function& f, bool* is_store) {
    const bool load = llvm::StringRef(name).startswith("vload") && f.arg_size() == 2;
    const bool store = llvm::StringRef(name).startswith("vstore") && f.arg_size() == 3;
    if ((!load && !store) || name.find("half") != std::string::npos) {
        return nullptr;
    }
    auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(load ? f.getReturnType() : f.getArg(0)->getType());
    if (vector == nullptr) {
        return nullptr;
    }
    llvm::Value* offset = f.getArg(load ? 0 : 1);
    llvm::Value* pointer = f.getArg(load ? 1 : 2);
    const unsigned space = pointer->getType()->getPointerAddressSpace();
    llvm::Type* element = vector->getElementType();
    llvm::Value* base = b.CreatePointerCast(pointer, element->getPointerTo(space));
    llvm::Value* index = b.CreateMul(b.CreateZExtOrTrunc(offset, b.getInt64Ty()), b.getInt64(vector->getNumElements()));
    llvm::Value* at = b.CreatePointerCast(b.CreateInBoundsGEP(element, base, index), vector->getPointerTo(space));
    const llvm::Align align(element->getScalarSizeInBits() / 8);
    if (load) {
        return b.CreateAlignedLoad(vector, at, align);
    }
    b.CreateAlignedStore(f.getArg(0), at, align);
    *is_store = true;
    return nullptr;
}

}  // namespace

bool define_atomic_builtin(llvm::Function& builtin) {
    const auto mangled = demangle(builtin.getName());
    if (!mangled || !llvm::StringRef(mangled->name).startswith("atom")) {
        return false;
    }
    return define_builtin(builtin);
}

bool define_builtin(llvm::Function& builtin) {
    const auto mangled = demangle(builtin.getName());
    if (!mangled) {
        return false;
    }
    auto* block = llvm::BasicBlock::Create(builtin.getContext(), "entry", &builtin);
    llvm::IRBuilder<> b(block);
    llvm::Value* result = nullptr;
    bool is_store = false;
    llvm::Type* type = builtin.getReturnType();
    if (llvm::StringRef(mangled->name).startswith("atom")) {
        result = emit_atomic(b, *mangled, builtin);
    } else if (llvm::StringRef(mangled->name).startswith("v")) {
        result = emit_vector_memory(b, mangled->name, builtin, &is_store);
    } else if (type->isFPOrFPVectorTy()) {
        result = builtin.arg_size() > 0 && builtin.getArg(0)->getType()->isVectorTy() && !type->isVectorTy()
                     ? emit_geometric(b, mangled->name, builtin)
                     : emit_float(b, mangled->name, builtin);
        if (result == nullptr) {
            result = emit_geometric(b, mangled->name, builtin);
        }
    } else if (type->isIntOrIntVectorTy()) {
        result = emit_integer(b, *mangled, builtin);
    }
    if (is_store) {
        b.CreateRetVoid();
        return true;
    }
    if (result == nullptr) {
        block->eraseFromParent();
        return false;
    }
    b.CreateRet(result);
    return true;
}

}  // namespace zehal::compiler
