#include "apps/run/steps/scientific.hpp"

#include <cstdio>

namespace blockeigs::apps {

std::string scientific(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*e", digits, value);
  return text;
}

}  // namespace blockeigs::apps
