// Reading --token-file: the token, or why the file cannot give one, in the
// words an operator can act on (no such file, permission denied, a
// directory, empty, not one token). The file's mode is not checked.
#pragma once

#include <string>
#include <variant>

namespace gwctl {

struct TokenFileError {
  std::string why;  // completes "--token-file FILE: "
};

std::variant<std::string, TokenFileError> read_token_file(const std::string& path);

// The reason for an errno from opening or reading the file.
std::string token_file_errno_text(int error);

}  // namespace gwctl
