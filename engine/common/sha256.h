#pragma once
#include <string>
#include <string_view>

namespace orrery {
// Lower-case hex SHA-256 of the bytes (OpenSSL's libcrypto).
std::string sha256_hex(std::string_view bytes);
}
