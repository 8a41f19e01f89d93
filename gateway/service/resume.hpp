// Awaiting work that completes through a callback on another thread (a
// database worker, the upstream client): the coroutine resumes on its own
// executor with the callback's value, whichever thread called back.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <memory>

namespace gw {

namespace asio = boost::asio;

// `start(executor, complete)` begins the work, told the executor the
// awaiting coroutine runs on; `complete` must be called exactly once, from
// any thread, with the result.
template <class T, class Start>
asio::awaitable<T> resume_on(Start start) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(T)>(
      [](auto handler, Start start) {
        auto executor = asio::get_associated_executor(handler);
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        start(executor, std::function<void(T)>([shared, executor](T value) {
          asio::post(executor, [shared, value = std::move(value)]() mutable { (*shared)(std::move(value)); });
        }));
      },
      asio::use_awaitable, std::move(start));
}

// The same for work that need not know where the coroutine runs:
// `start(complete)`.
template <class T, class Start>
asio::awaitable<T> resume_with(Start start) {
  return resume_on<T>([start = std::move(start)](const auto&, std::function<void(T)> complete) mutable {
    start(std::move(complete));
  });
}

}  // namespace gw
