#include "gatewayctl/token_file.hpp"

#include "gatewayctl/cli.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gwctl {

std::string token_file_errno_text(int error) {
  switch (error) {
    case ENOENT:
      return "no such file";
    case ENOTDIR:
      return "a part of the path is not a directory";
    case EACCES:
    case EPERM:
      return "permission denied (the file must be readable by the user running gatewayctl)";
    case EISDIR:
      return "is a directory, not a file";
    case ELOOP:
      return "too many symbolic links";
    default:
      return std::string("cannot be read: ") + std::strerror(error);
  }
}

std::variant<std::string, TokenFileError> read_token_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return TokenFileError{token_file_errno_text(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool directory = S_ISDIR(st.st_mode);
    ::close(fd);
    return TokenFileError{directory ? token_file_errno_text(EISDIR) : "is not a regular file"};
  }
  // A token is short: anything past 64 KiB is the wrong file.
  constexpr std::size_t limit = 64 * 1024;
  std::string text;
  char chunk[4096];
  for (;;) {
    const auto n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return TokenFileError{token_file_errno_text(error)};
    }
    if (n == 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    if (text.size() > limit) {
      ::close(fd);
      return TokenFileError{"is larger than 64 KiB: not a token file"};
    }
  }
  ::close(fd);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return TokenFileError{text.empty() ? "is empty" : "holds only whitespace"};
  auto token = token_from_file_text(text);
  if (!token) return TokenFileError{"does not hold one token (visible ASCII, no spaces; one line)"};
  return *token;
}

}  // namespace gwctl
