// Awaiting work that completes through a callback (a database worker, the
// upstream client): the coroutine resumes on its own executor with the
// callback's value, whichever thread called back. A callback on the
// coroutine's own thread (an upstream exchange, which runs on the caller's
// io_context) resumes it there and then, instead of queueing one more
// handler behind everything else the thread has to do.
#pragma once

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
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
        // One allocation for all the callback needs (the handler, its
        // executor, whether start() has returned): the callback itself holds
        // only the pointer, which std::function keeps without allocating.
        using Handler = decltype(handler);
        using Executor = asio::associated_executor_t<Handler>;
        struct State {
          State(Handler h, Executor e) : handler(std::move(h)), executor(std::move(e)) {}
          Handler handler;
          Executor executor;
          // A callback made inside start() (a refusal on the spot) must not
          // resume the coroutine while it is still being suspended: until
          // start() has returned, the resumption is always queued.
          std::atomic<bool> started{false};
        };
        auto executor = asio::get_associated_executor(handler);
        auto state = std::make_shared<State>(std::move(handler), executor);
        start(executor, std::function<void(T)>([state](T value) {
          auto resume = [state, value = std::move(value)]() mutable { state->handler(std::move(value)); };
          if (state->started.load(std::memory_order_acquire))
            asio::dispatch(state->executor, std::move(resume));
          else
            asio::post(state->executor, std::move(resume));
        }));
        state->started.store(true, std::memory_order_release);
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
