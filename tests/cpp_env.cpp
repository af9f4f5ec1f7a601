// Points the in-process C++ front end loader at the freshly built liboomlint-cpp.so: test
// binaries live in tests/, away from the shared object the oomlint binary finds beside itself.
#include <cstdlib>

#include "test_paths.h"

namespace {
#ifdef OOMLINT_CPP_PLUGIN
const int kPluginPathSet = ::setenv("OOMLINT_CPP_FRONTEND", OOMLINT_CPP_PLUGIN, 0);
#endif
}  // namespace
