// libFuzzer target: arbitrary bytes as oomlint.toml and as pyproject.toml. Bad input must come back
// as a ConfigError, never a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/oomlint_config_fuzz_" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  for (bool pyproject : {false, true}) {
    try {
      auto c = oomlint::loadConfigFile(path, pyproject);
      if (c) {
        oomlint::RuleSelection sel(c->selectors);
        (void)sel.fingerprint();
      }
    } catch (const oomlint::ConfigError&) {
    }
  }
  return 0;
}
