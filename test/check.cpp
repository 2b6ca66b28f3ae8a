#include "check.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

namespace check {

namespace {

struct Test {
    const char* name;
    void (*fn)();
};

std::vector<Test>& registry() {
    static std::vector<Test> tests;
    return tests;
}

std::vector<std::string> failures;
bool big_tier = false;

}  // namespace

Registrar::Registrar(const char* name, void (*fn)()) { registry().push_back({name, fn}); }

void fail(const std::string& message) { failures.push_back(message); }

bool big() { return big_tier; }

}  // namespace check

int main(int argc, char** argv) {
    std::vector<const char*> filters;
    const char* env = std::getenv("GPUFFT_BIG");
    check::big_tier = env && *env && std::strcmp(env, "0") != 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--big") == 0) check::big_tier = true;
        else filters.push_back(argv[i]);
    }
    int passed = 0, failed = 0;
    for (const check::Test& t : check::registry()) {
        bool selected = filters.empty();
        for (const char* f : filters) selected |= std::strstr(t.name, f) != nullptr;
        if (!selected) continue;
        check::failures.clear();
        auto start = std::chrono::steady_clock::now();
        try {
            t.fn();
        } catch (const std::exception& e) {
            check::fail(std::string("exception: ") + e.what());
        } catch (...) {
            check::fail("unknown exception");
        }
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (check::failures.empty()) {
            ++passed;
            std::printf("ok   %-44s %7.2f s\n", t.name, seconds);
        } else {
            ++failed;
            std::printf("FAIL %-44s %7.2f s\n", t.name, seconds);
            for (size_t i = 0; i < check::failures.size() && i < 10; ++i) std::printf("     %s\n", check::failures[i].c_str());
            if (check::failures.size() > 10) std::printf("     ... %zu more\n", check::failures.size() - 10);
        }
        std::fflush(stdout);
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
