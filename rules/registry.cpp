#include "rules/registry.h"

#include <vector>

namespace oomlint {

const std::vector<const Rule*>& allRules() {
  static const std::vector<const Rule*> rules = {
      &rules::oom101(),
      &rules::oom102(),
      &rules::oom103(),
      &rules::oom104(),
      &rules::oom105(),
      &rules::oom106(),
      &rules::oom107(),
      &rules::oom108(),
      &rules::oom109(),
      &rules::oom201(),
      &rules::oom301(),
      &rules::oom302(),
      &rules::oom303(),
      &rules::oom304(),
      &rules::oom305(),
      &rules::oom401(),
      &rules::oom402(),
      &rules::oom403(),
      &rules::oom404(),
      &rules::oom501(),
      &rules::oom502(),
      &rules::oom503(),
      &rules::oom504(),
      &rules::oom505(),
      &rules::oom506(),
      &rules::oom601(),
      &rules::oom602(),
      &rules::oom701(),
      &rules::oom702(),
      &rules::oom801(),
      &rules::oom802(),
      &rules::oom900(),
  };
  return rules;
}

}  // namespace oomlint
