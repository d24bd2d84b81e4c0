#include <spillway/stream/actor.hpp>

#include <exception>
#include <utility>

#include <spillway/core/mutex.hpp>
#include <spillway/exec/task_group.hpp>

namespace spillway::stream {
namespace {

/// The error to report of several actors' failures: the first that is not
/// a consequence of the abort, else the first.
class FirstFailure {
  public:
    void keep(std::exception_ptr error) noexcept {
        bool aborted = false;
        try {
            std::rethrow_exception(error);
        } catch (PipelineAborted const&) {
            aborted = true;
        } catch (...) {
        }
        MutexLock lock(mutex_);
        if (!error_ || (error_is_abort_ && !aborted)) {
            error_ = std::move(error);
            error_is_abort_ = aborted;
        }
    }
    void rethrow() {
        MutexLock lock(mutex_);
        if (error_) {
            std::rethrow_exception(error_);
        }
    }

  private:
    Mutex mutex_;
    std::exception_ptr error_ SPILLWAY_GUARDED_BY(mutex_);
    bool error_is_abort_ SPILLWAY_GUARDED_BY(mutex_) = false;
};

}  // namespace

void run_actors(Context& context, std::vector<Actor> actors) {
    FirstFailure failure;
    {
        // Each actor catches its own exception: to abort the pipeline at
        // once, to keep the error that is not a consequence of the abort,
        // and because a group that saw an exception would keep the actors
        // not started yet from starting.
        exec::TaskGroup group(context.executor());
        for (Actor& actor : actors) {
            group.spawn([actor = std::move(actor), &context, &failure](std::stop_token const&) mutable -> exec::Task<void> {
                try {
                    co_await std::move(actor);
                } catch (...) {
                    context.abort();
                    failure.keep(std::current_exception());
                }
            });
        }
        group.wait();
    }
    failure.rethrow();
}

}  // namespace spillway::stream
