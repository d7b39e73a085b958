// The filters, tests, global functions and methods a template may use. The parser checks every
// name against these lists, so a template naming anything else fails to load instead of
// rendering a different prompt than jinja2 would.
#pragma once

#include <string_view>

namespace mlaspec::tokenizer::jinja {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);
// raise_exception, namespace, range, strftime_now, dict.
bool is_known_global(std::string_view name);
// Python methods of str, dict and list values the sandbox allows (startswith, items, get, ...).
bool is_known_method(std::string_view name);

}  // namespace mlaspec::tokenizer::jinja
