// SPDX-License-Identifier: Apache-2.0
// Internal error type: thrown inside the library, caught at the C boundary
// (src/api) and turned into a status code plus the context's last message.
#pragma once

#include <gpuprim/gpuprim.h>

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <string>

namespace gpuprim {

class Error : public std::exception {
public:
    Error(gpuprim_status_t status, std::string message)
        : status_(status), message_(std::move(message)) {}
    gpuprim_status_t status() const noexcept { return status_; }
    const char *what() const noexcept override { return message_.c_str(); }

private:
    gpuprim_status_t status_;
    std::string message_;
};

// printf-style throw; the one way library code reports a failure.
[[noreturn]] inline void fail(gpuprim_status_t status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

[[noreturn]] inline void fail(gpuprim_status_t status, const char *format, ...) {
    char text[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    throw Error(status, text);
}

}  // namespace gpuprim
