// libFuzzer target: kernel-spec parsing (see targets.h). Built and run by `make fuzz`.
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz::kernel_spec(data, size); }
