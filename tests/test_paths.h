#pragma once
// Where the build put its programs and where the checkout is, for the tests that run them or read
// its files. The values live in one generated translation unit (test_paths.cpp in the build folder),
// not in every test's compile line: a line that names the checkout's folder would miss the compiler
// cache whenever the same sources are built from a clone in another folder, as CI's are.

namespace testpaths {
extern const char* const kBinary;           ///< the oomlint executable of this build
extern const char* const kSource;           ///< the checkout
extern const char* const kFixtures;         ///< fixtures/ of the checkout
extern const char* const kExamples;         ///< examples/ of the checkout
extern const char* const kSarifMultitool;   ///< the SARIF validator fetched by scripts/fetch-deps.sh
extern const char* const kActionValidator;  ///< action-validator's CLI fetched by scripts/fetch-deps.sh
extern const char* const kProbeBinary;      ///< oomlint-probe, or "" when this build has none
extern const char* const kCppPlugin;        ///< liboomlint-cpp.so, or "" when this build has none
/// tests/programs/trace_header_cpu.cpp built against the LibTorch found, or "" when none was
extern const char* const kTraceHeaderProgram;
}  // namespace testpaths

#define OOMLINT_BINARY (::testpaths::kBinary)
#define OOMLINT_SOURCE (::testpaths::kSource)
#define OOMLINT_SOURCE_DIR (::testpaths::kSource)
#define OOMLINT_FIXTURES (::testpaths::kFixtures)
#define OOMLINT_EXAMPLES (::testpaths::kExamples)
#define OOMLINT_SARIF_MULTITOOL (::testpaths::kSarifMultitool)
#define OOMLINT_ACTION_VALIDATOR (::testpaths::kActionValidator)
#ifdef OOMLINT_HAVE_PROBE
#define OOMLINT_PROBE_BINARY (::testpaths::kProbeBinary)
#endif
#ifdef OOMLINT_HAVE_CPP_PLUGIN
#define OOMLINT_CPP_PLUGIN (::testpaths::kCppPlugin)
#endif
