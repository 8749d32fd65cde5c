// A kernel with barriers as a coroutine per work-item: each barrier a suspend point, so
// that the group runner runs every work-item of a group up to the next barrier in turn,
// on the thread's own stack. LLVM's coroutine passes (part of the O2 pipeline) split the
// function and keep in a frame what lives across a barrier: values, private arrays.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// Whether `function` calls `barrier`, itself or through the functions it calls.
bool reaches_barrier(llvm::Function& function, llvm::Function* barrier);

// Turns `entry` (a function `i8* (i8** args, i8* context)` that runs one work-item; its
// returns give null) into a work-item coroutine: a call allocates its frame with the
// runtime's kFrameSymbol, suspends before the first instruction of the work-item and
// returns the frame's handle (null when the frame could not be allocated); each resume
// runs the work-item to its next barrier or its end. The functions that reach `barrier`
// are inlined into `entry`. MODULE_BUILD_FAILURE with `log` when one of them is recursive
// or cannot be inlined.
ze_result_t make_work_item_coroutine(llvm::Function& entry, llvm::Function* barrier, std::string* log);

// Adds "zehal.resume", `i8 (i8* handle)`: resumes a work-item coroutine and answers 1
// when the work-item has ended, else 0 (it stopped at a barrier).
llvm::Function* add_resume_function(llvm::Module& module);

}  // namespace zehal::compiler
