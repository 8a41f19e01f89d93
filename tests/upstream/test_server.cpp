// The scripted test server (see test_server.hpp).
#include "test_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace gw::upstream::test {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::vector<std::string> RawRequest::values(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : headers)
    if (iequal(n, name)) out.push_back(v);
  return out;
}

ServerSession::ServerSession(tcp::socket socket, net::ssl::context* tls, int index)
    : socket_(std::move(socket)), index_(index) {
  if (tls) tls_.emplace(socket_, *tls);
}

bool ServerSession::handshake() {
  if (!tls_) return true;
  boost::system::error_code ec;
  tls_->handshake(net::ssl::stream_base::server, ec);
  return !ec;
}

std::size_t ServerSession::read_some(char* data, std::size_t size, boost::system::error_code& ec) {
  if (tls_) return tls_->read_some(net::buffer(data, size), ec);
  return socket_.read_some(net::buffer(data, size), ec);
}

bool ServerSession::fill() {
  char chunk[16 * 1024];
  boost::system::error_code ec;
  std::size_t n = read_some(chunk, sizeof chunk, ec);
  if (ec) return false;
  buffer_.append(chunk, n);
  return true;
}

std::optional<RawRequest> ServerSession::read_head() {
  std::size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  std::string head = buffer_.substr(0, end);
  buffer_.erase(0, end + 4);

  RawRequest request;
  std::size_t line_end = head.find("\r\n");
  std::string line = head.substr(0, line_end);
  std::size_t first_space = line.find(' ');
  std::size_t second_space = line.find(' ', first_space + 1);
  request.method = line.substr(0, first_space);
  request.target = line.substr(first_space + 1, second_space - first_space - 1);
  while (line_end != std::string::npos) {
    std::size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    std::string field = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    std::size_t colon = field.find(':');
    std::string value = field.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    request.headers.emplace_back(field.substr(0, colon), value);
  }
  return request;
}

std::optional<RawRequest> ServerSession::read_request() {
  auto request = read_head();
  if (!request) return std::nullopt;
  auto lengths = request->values("Content-Length");
  std::size_t length = lengths.empty() ? 0 : std::stoul(lengths.front());
  while (buffer_.size() < length)
    if (!fill()) return std::nullopt;
  request->body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return request;
}

bool ServerSession::write(std::string_view bytes) {
  boost::system::error_code ec;
  if (tls_)
    net::write(*tls_, net::buffer(bytes), ec);
  else
    net::write(socket_, net::buffer(bytes), ec);
  return !ec;
}

bool ServerSession::write_repeated(std::string_view unit, std::size_t times) {
  const std::size_t per_piece = std::max<std::size_t>(1, 64 * 1024 / unit.size());
  std::string piece;
  for (std::size_t i = 0; i < std::min(per_piece, times); ++i) piece += unit;
  while (times > 0) {
    const std::size_t n = std::min(times, per_piece);
    if (!write(std::string_view(piece).substr(0, n * unit.size()))) return false;
    times -= n;
  }
  return true;
}

void ServerSession::wait_acknowledged() {
  // SIOCOUTQ: bytes written but not yet acknowledged by the peer. Bounded,
  // so a test that went wrong cannot hang here.
  // A connection the client has closed or reset acknowledges nothing more.
  for (int i = 0; i < 10000; ++i) {
    tcp_info info{};
    socklen_t size = sizeof info;
    int unacknowledged = 0;
    const int fd = socket_.native_handle();
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 ||
        (info.tcpi_state != TCP_ESTABLISHED && info.tcpi_state != TCP_CLOSE_WAIT))
      return;
    if (::ioctl(fd, SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ServerSession::wait_for_eof() {
  while (fill()) buffer_.clear();
}

void ServerSession::close() {
  std::lock_guard lock(fd_mutex_);
  boost::system::error_code ec;
  socket_.close(ec);
  closed_ = true;
}

void ServerSession::reset() {
  std::lock_guard lock(fd_mutex_);
  boost::system::error_code ec;
  socket_.set_option(net::socket_base::linger(true, 0), ec);
  socket_.close(ec);
  closed_ = true;
}

void ServerSession::force_shutdown() {
  std::lock_guard lock(fd_mutex_);
  if (!closed_) ::shutdown(socket_.native_handle(), SHUT_RDWR);
}

TestServer::TestServer(script run, net::ssl::context* tls)
    : run_(std::move(run)), tls_(tls), acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
  port_ = acceptor_.local_endpoint().port();
  acceptor_thread_ = std::thread([this] { accept_loop(); });
}

void TestServer::accept_loop() {
  for (;;) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    acceptor_.accept(socket, ec);
    if (stopping_) return;
    if (ec) continue;
    int index = connections_++;
    std::lock_guard lock(sessions_mutex_);
    auto& s = sessions_.emplace_back(std::make_unique<ServerSession>(std::move(socket), tls_, index));
    session_threads_.emplace_back([this, s = s.get()] {
      if (s->handshake()) run_(*s);
      ++finished_;
    });
  }
}

TestServer::~TestServer() {
  stopping_ = true;
  {
    // Wakes the blocking accept().
    tcp::socket waker(io_);
    boost::system::error_code ec;
    waker.connect(acceptor_.local_endpoint(), ec);
    acceptor_thread_.join();
  }
  std::lock_guard lock(sessions_mutex_);
  for (auto& s : sessions_) s->force_shutdown();
  for (auto& t : session_threads_) t.join();
}

std::string reply(unsigned status, std::string_view body, std::string_view extra) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
  out += extra;
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out += body;
  return out;
}

}  // namespace gw::upstream::test
