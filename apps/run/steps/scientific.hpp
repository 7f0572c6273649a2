// Numbers in the apps' tables.
#pragma once

#include <string>

namespace blockeigs::apps {

// "1.234e-05" style, for tables.
std::string scientific(double value, int digits = 3);

}  // namespace blockeigs::apps
