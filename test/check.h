// A small test harness: TEST(name) registers a test; EXPECT records a failure and carries on;
// each binary prints "ok name" / "FAIL name: why" per test and ends with "N passed, N failed".
// Arguments select tests by substring; GPUFFT_BIG=1 (or --big) adds the heavier tier.
// GPUFFT_TEST_JOBS=N (or --jobs N) runs the tests in N processes side by side, each taking the
// next test when it finishes one; their lines come in the order the tests finish.
#pragma once

#include <sstream>
#include <string>

namespace check {

struct Registrar {
    Registrar(const char* name, void (*fn)());
};

/// Records a failure of the running test (the test goes on, so it can report more).
void fail(const std::string& message);
/// True when the heavier tier was asked for.
bool big();

/// A binary declaring one (at namespace scope) runs its tests one at a time even where
/// GPUFFT_TEST_JOBS or --jobs asks for test processes side by side; `why` says what would clash.
struct Serial {
    explicit Serial(const char* why);
};

/// Builds a message from streamable parts: str("got ", x, " expected ", y).
template <typename... T>
std::string str(const T&... parts) {
    std::ostringstream s;
    s.precision(6);
    (s << ... << parts);
    return s.str();
}

}  // namespace check

#define TEST(name)                                                  \
    static void name();                                             \
    static const check::Registrar name##_registrar(#name, name);    \
    static void name()

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) check::fail(check::str(__FILE__, ":", __LINE__, ": ", #cond, " -- ", __VA_ARGS__)); \
    } while (0)
