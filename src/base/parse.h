// Numbers and sizes written by a user (options, kernel specs): each mistake is a UsageError that
// quotes the text and says what was expected.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpufft {

double parse_double(const std::string& text, const std::string& what, double lo, double hi);
int parse_int(const std::string& text, const std::string& what, int lo, int hi);
/// A number of bytes: "1073741824", "512M", "1.5G", "64KiB" (K, M, G, T: powers of 1024; an
/// optional "iB" or "B").
long long parse_bytes(const std::string& text, const std::string& what);
/// "WxH" (or "N" for N x N).
void parse_size(const std::string& text, const std::string& what, int& width, int& height);
/// The items of `text` between separators `sep` ("a,,b": "a", "", "b"; "": one empty item).
std::vector<std::string> split_list(const std::string& text, char sep);
/// Whether `name` ends with `suffix`; with `any_case`, whatever the case of its letters (`suffix`
/// in lower case: ".png" is a suffix of "a.PNG").
bool ends_with(const std::string& name, const std::string& suffix, bool any_case = false);
/// A comma-separated list of sizes, each "WxH" or "N".
std::vector<std::pair<int, int>> parse_size_list(const std::string& list, const std::string& what);

}  // namespace gpufft
