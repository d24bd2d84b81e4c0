#pragma once
/// @file
/// `parallel_join` and `parallel_join_settled`: run a batch of work items at
/// once and collect their results in index order.

#include <concepts>
#include <deque>
#include <ranges>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

#include <spillway/exec/detail/result_slot.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/exec/outcome.hpp>
#include <spillway/exec/task.hpp>
#include <spillway/exec/task_group.hpp>

namespace spillway::exec {

/// A work item of `parallel_join`: called with a stop token, it returns a
/// value, or a `Task` of one.
template <typename Fn>
concept JoinItem = std::invocable<Fn&, std::stop_token const&>
                   && !std::is_void_v<detail::awaited_t<std::invoke_result_t<Fn&, std::stop_token const&>>>;

namespace detail {

/// What the work item type `Fn` produces.
template <typename Fn>
using join_item_result_t = awaited_t<std::invoke_result_t<Fn&, std::stop_token const&>>;

/// `item`, moved out of its range if the join owns the range (`Items` is
/// an rvalue), copied if it borrows it.
template <typename Items, typename Item>
std::remove_cvref_t<Item> take_item(Item& item) {
    if constexpr (std::is_lvalue_reference_v<Items>) {
        return item;
    } else {
        return std::move(item);
    }
}

/// Spawns every item of `items` in `group`, each leaving its outcome in its
/// own slot of `slots`. With `settle`, an item's exception goes into its
/// slot; otherwise it fails the group. Items of an rvalue range are moved,
/// those of an lvalue range copied.
template <typename Items, typename T>
void spawn_into(TaskGroup& group, Items&& items, std::deque<ResultSlot<T>>& slots, bool settle) {
    for (auto&& item : items) {
        using Item = std::remove_cvref_t<decltype(item)>;
        ResultSlot<T>* slot = &slots.emplace_back();
        auto call = [slot, settle, fn = take_item<Items>(item)](
                        std::stop_token const& stop) mutable -> Task<void> {
            try {
                if constexpr (is_task<std::invoke_result_t<Item&, std::stop_token const&>>) {
                    slot->value.emplace(co_await std::invoke(fn, stop));
                } else {
                    slot->value.emplace(std::invoke(fn, stop));
                }
            } catch (...) {
                if (!settle) {
                    throw;
                }
                slot->error = std::current_exception();
            }
        };
        group.spawn(std::move(call));
    }
}

}  // namespace detail

/// Starts every item of `items` on `executor` at once and returns their
/// results in index order. Each item is called as `item(stop_token)` and
/// returns a `T` or a `Task<T>`.
///
/// Fail-fast: on the first exception the rest get a stop request (items not
/// started yet are skipped), the call waits for every item to finish, then
/// rethrows that first exception. Nothing started by the call runs after it
/// returns or throws, so items may borrow the caller's data.
///
/// Blocks the caller, running the executor's work meanwhile (safe on one of
/// its threads). Items are copied from `items` (moved if it is an rvalue
/// range) and destroyed when they have run.
/// @throws the first exception an item threw.
template <std::ranges::input_range Items>
    requires JoinItem<std::ranges::range_value_t<Items>>
auto parallel_join(Executor& executor, Items&& items)
    -> std::vector<detail::join_item_result_t<std::ranges::range_value_t<Items>>> {
    using T = detail::join_item_result_t<std::ranges::range_value_t<Items>>;
    std::deque<detail::ResultSlot<T>> slots;
    {
        TaskGroup group(executor);
        detail::spawn_into(group, std::forward<Items>(items), slots, false);
        group.wait();
    }
    std::vector<T> results;
    results.reserve(slots.size());
    for (auto& slot : slots) {
        results.push_back(slot.take());
    }
    return results;
}

/// Like `parallel_join`, but an exception does not stop the others: it
/// waits for every item and returns each one's value or exception, in index
/// order.
template <std::ranges::input_range Items>
    requires JoinItem<std::ranges::range_value_t<Items>>
auto parallel_join_settled(Executor& executor, Items&& items)
    -> std::vector<Outcome<detail::join_item_result_t<std::ranges::range_value_t<Items>>>> {
    using T = detail::join_item_result_t<std::ranges::range_value_t<Items>>;
    std::deque<detail::ResultSlot<T>> slots;
    {
        TaskGroup group(executor);
        detail::spawn_into(group, std::forward<Items>(items), slots, true);
        group.wait();
    }
    std::vector<Outcome<T>> outcomes;
    outcomes.reserve(slots.size());
    for (auto& slot : slots) {
        if (slot.error) {
            outcomes.emplace_back(slot.error);
        } else {
            outcomes.emplace_back(std::move(*slot.value));
        }
    }
    return outcomes;
}

}  // namespace spillway::exec
