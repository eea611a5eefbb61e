// Python's str.format(**fields) for the LongBench prompt templates: "{name}" is replaced by the
// field's text, "{{" and "}}" are literal braces. Anything else str.format would accept
// (positional "{}", "{0}", conversions "!r", format specs ":>10", "{a.b}", "{a[0]}") is rejected
// with an error, as is everything str.format rejects (a single '}', an unclosed '{').
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kvs::longbench {

// The field names a template uses, in order of appearance; throws kvs::Error ("<where>: ...") on
// a template str.format would reject or that uses an unsupported feature.
std::vector<std::string> template_fields(const std::string& tmpl, const std::string& where);

// The filled template; a field the map lacks is an error (Python raises KeyError).
std::string format_template(const std::string& tmpl, const std::map<std::string, std::string>& fields,
                            const std::string& where);

}  // namespace kvs::longbench
