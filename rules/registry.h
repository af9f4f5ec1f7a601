#pragma once
/// One line per rule: adding a rule means writing its file and one line here and in registry.cpp.

#include <vector>

#include "engine/rule.h"
#include "engine/selection.h"

namespace oomlint::rules {
const Rule& oom101();
const Rule& oom102();
const Rule& oom103();
const Rule& oom104();
const Rule& oom105();
const Rule& oom106();
const Rule& oom107();
const Rule& oom108();
const Rule& oom109();
const Rule& oom201();
const Rule& oom301();
const Rule& oom302();
const Rule& oom303();
const Rule& oom304();
const Rule& oom305();
const Rule& oom401();
const Rule& oom402();
const Rule& oom403();
const Rule& oom404();
const Rule& oom501();
const Rule& oom502();
const Rule& oom503();
const Rule& oom504();
const Rule& oom505();
const Rule& oom506();
const Rule& oom601();
const Rule& oom602();
const Rule& oom701();
const Rule& oom702();
const Rule& oom801();
const Rule& oom802();
const Rule& oom900();

}  // namespace oomlint::rules
