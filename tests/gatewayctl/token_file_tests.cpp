// tools/gatewayctl/token_file.hpp: each reason a --token-file cannot give a
// token, as the operator reads it, on real files in a fresh directory.
#include "gatewayctl/token_file.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace gwctl;

namespace {

struct Dir {
  Dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gatewayctl-token-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~Dir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = (path / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  std::filesystem::path path;
};

std::string why(const std::string& file) {
  auto r = read_token_file(file);
  REQUIRE_MESSAGE(std::holds_alternative<TokenFileError>(r), "read a token from " << file);
  return std::get<TokenFileError>(r).why;
}

}  // namespace

TEST_CASE("read_token_file: the token, surrounding whitespace ignored") {
  Dir d;
  CHECK(std::get<std::string>(read_token_file(d.write("t", "dev-operator-token\n"))) == "dev-operator-token");
  CHECK(std::get<std::string>(read_token_file(d.write("u", "  abc\r\n"))) == "abc");
}

TEST_CASE("read_token_file: says why a file gives no token") {
  Dir d;
  CHECK(why((d.path / "absent").string()) == "no such file");
  CHECK(why((d.path / "absent" / "token").string()) == "no such file");
  CHECK(why(d.write("plain", "x") + "/token") == "a part of the path is not a directory");
  CHECK(why(d.path.string()) == "is a directory, not a file");
  CHECK(why(d.write("empty", "")) == "is empty");
  CHECK(why(d.write("blank", " \n\n")) == "holds only whitespace");
  CHECK(why(d.write("two", "one two\n")) == "does not hold one token (visible ASCII, no spaces; one line)");
  CHECK(why(d.write("big", std::string(70 * 1024, 'a'))) == "is larger than 64 KiB: not a token file");
  CHECK(why("/dev/null") == "is not a regular file");
}

TEST_CASE("token_file_errno_text: permission denied says what to do") {
  // Tests run as root, which reads any file: the errno's text is checked directly.
  CHECK(token_file_errno_text(EACCES) ==
        "permission denied (the file must be readable by the user running gatewayctl)");
  CHECK(token_file_errno_text(EPERM) == token_file_errno_text(EACCES));
  CHECK(token_file_errno_text(EIO).starts_with("cannot be read: "));
}
