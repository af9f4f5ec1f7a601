#include "rules/registry.h"

#include <vector>

namespace oomlint {

const std::vector<const Rule*>& allRules() {
  static const std::vector<const Rule*> rules = {
      &rules::oom101(), &rules::oom102(), &rules::oom103(), &rules::oom104(), &rules::oom105(),
      &rules::oom201(), &rules::oom301(), &rules::oom302(), &rules::oom401(), &rules::oom501(),
  };
  return rules;
}

}  // namespace oomlint
