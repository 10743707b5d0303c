#include "weft/context.h"

#include <cctype>
#include <charconv>

#include "weft/base.h"

namespace weft {

Context Context::FromString(std::string_view text) {
  auto bad = [&]() -> Context {
    Fail("cannot parse context '{}': write a device type and an index, like cpu(0), cuda:1 or simdev", text);
  };
  size_t i = 0;
  while (i < text.size() && (std::islower(static_cast<unsigned char>(text[i])) ||
                             std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '_'))
    ++i;
  if (i == 0) return bad();
  std::string type(text.substr(0, i));
  if (i == text.size()) return Context(type, 0);
  std::string_view rest = text.substr(i);
  std::string_view num;
  if (rest.front() == ':') {
    num = rest.substr(1);
  } else if (rest.front() == '(' && rest.back() == ')') {
    num = rest.substr(1, rest.size() - 2);
  } else {
    return bad();
  }
  int id = -1;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), id);
  if (ec != std::errc() || p != num.data() + num.size() || id < 0) return bad();
  return Context(type, id);
}

}  // namespace weft
